/**
 * The hosted checkout page and the widget files as the server sends them:
 * CSP that lets any origin frame the page and nothing more, versioned and
 * immutable module URLs, language chunks, compression, ETags and CORS.
 * Needs the built widget (`npm test` builds it first).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutPage, WIDGET_DIR } from '../../server/edges/checkout/checkout-page.js';
import type { CheckoutView } from '../../server/modules/payments/checkout-view.rules.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const entry = readFileSync(`${WIDGET_DIR}crypto-checkout.js`);
const arChunk = readdirSync(WIDGET_DIR).find((n) => n.startsWith('locale-ar-'))!;

/** The attributes of the page's `<crypto-checkout>` tag, sorted. */
const openTag = (html: string) => /<crypto-checkout ([^>]*)>/.exec(html)?.[1]!.split(' ').sort();

async function checkoutToken(locale: string) {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `route-${Math.random()}`, businessId: t.business.businessId, locale, depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
  });
  return (res.json().paymentUrl as string).split('/').pop()!;
}

describe('hosted checkout page', () => {
  it('may be framed by any origin and allows nothing else it does not need', async () => {
    const token = await checkoutToken('ar_EG');
    const res = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-frame-options']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const csp = String(res.headers['content-security-policy']).split('; ');
    expect(csp).toContain('frame-ancestors *');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp.some((d) => d.startsWith('script-src') && d.includes('unsafe'))).toBe(false);
    const html = res.body;
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toMatch(/<script type="module" src="\/widget\/crypto-checkout\.js\?v=[\w-]{16}"><\/script>/);
    expect(html).toContain(`<link rel="modulepreload" href="/widget/${arChunk}">`);
    expect(openTag(html)).toEqual(['full-page', `payment-url="./${token}"`]);
  });

  it('names no origin: reached under a second host name, the widget calls the API of that host (CSP connect-src self)', async () => {
    const token = await checkoutToken('en');
    const res = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html', host: 'pay.second-name.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('kassa.test');
    expect(res.body).not.toMatch(/(src|href|payment-url)="https?:/);
    const slash = await t.app.inject({ url: `/checkout/${token}/`, headers: { accept: 'text/html' } });
    if (slash.statusCode === 200) expect(openTag(slash.body)).toEqual(['full-page', 'payment-url="./"']);
    else expect(slash.statusCode).toBe(404);
  });

  it('inlines the view the checkout API answers, so the widget shows it before any request', async () => {
    const token = await checkoutToken('en-US');
    const page = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
    const data = /<\/template><script type="application\/json">(.*?)<\/script><\/crypto-checkout>/.exec(page.body);
    expect(data).not.toBeNull();
    const api = await t.app.inject({ url: `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token }))}` });
    expect(api.statusCode).toBe(200);
    const view = api.json().result.data;
    expect(JSON.parse(data![1]!)).toEqual(view);
    expect(view).toMatchObject({ status: 'PENDING', depositCurrency: 'BTC' });
  });

  it('renders the first view on the server (declarative shadow DOM): amount, address and QR in the payment language, before any script', async () => {
    const token = await checkoutToken('de-DE');
    const page = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
    const api = await t.app.inject({ url: `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token }))}` });
    const view = api.json().result.data as CheckoutView;
    const shadow = /<crypto-checkout [^>]*><template shadowrootmode="open">(.*?)<\/template><script type="application\/json">/s.exec(
      page.body.replace(' shadowroot="open"', ''),
    )?.[1];
    expect(shadow).toBeDefined();
    // The widget's own styles and card, in German (the payment's language), with what the customer needs to pay.
    expect(shadow).toMatch(/^<style>[^<]*:host\b/);
    expect(shadow).toContain('<div part="base" class="card" lang="de" dir="ltr" aria-busy="false">');
    expect(shadow).toContain('<p class="label">Einzahlungsadresse</p>');
    expect(shadow).toContain(`<span class="value mono" dir="ltr">${view.walletAddress}</span>`);
    expect(shadow).toContain('<bdi class="big">0,01\u00a0BTC</bdi>');
    expect(shadow).toContain(`<a href="${view.paymentUri}">In Wallet öffnen</a>`);
    expect(shadow).toContain('<figure class="qr" part="qr">');
    // No hydration markers: the widget renders over this view, it does not adopt it.
    expect(page.body).not.toContain('<!--');
    expect(shadow).not.toContain('class="skeleton"');
  });

  it('still serves the page, without the inlined view, when the view cannot be built (rates down for a NEW payment)', async () => {
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: `route-new-${Math.random()}`, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '10.00',
    });
    const token = (res.json().paymentUrl as string).split('/').pop()!;
    const rates = t.deps.rates;
    const down = () => Promise.reject(new Error('rates provider down'));
    t.deps.rates = { rate: down, provenance: down };
    try {
      const page = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`<crypto-checkout payment-url="./${token}" full-page></crypto-checkout>`);
    } finally {
      t.deps.rates = rates;
    }
    const page = await t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
    expect(page.body).toContain('<script type="application/json">');
  });

  it('escapes the inlined view so no text in it can close its script element', () => {
    const hostile = '</script><script>alert(1)</script><!--';
    const html = checkoutPage('https://kassa.test/checkout/x', 'en', '/widget/crypto-checkout.js', null, { hostile } as unknown as CheckoutView);
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the module's and the data block's own
    expect(html).not.toContain('<!--');
    const json = /<script type="application\/json">(.*?)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(json)).toEqual({ hostile });
  });

  it('counts page loads against the checkout limit of its token (120 a minute): then 429 with Retry-After', async () => {
    const token = await checkoutToken('en');
    const load = () => t.app.inject({ url: `/checkout/${token}`, headers: { accept: 'text/html' } });
    for (let i = 0; i < 120; i++) expect((await load()).statusCode).toBe(200);
    const refused = await load();
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.body).toContain('Too many requests');
    const program = await t.app.inject({ url: `/checkout/${token}` });
    expect(program.statusCode).toBe(429);
    expect(program.headers['content-type']).toContain('application/problem+json');
  });

  it('answers an unknown token with a page for people and problem+json for programs', async () => {
    const page = await t.app.inject({ url: '/checkout/AAAAAAAAAAAAAAAAAAAAAA', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(404);
    expect(page.body).toContain('This checkout link is not valid.');
    const api = await t.app.inject({ url: '/checkout/AAAAAAAAAAAAAAAAAAAAAA' });
    expect(api.statusCode).toBe(404);
    expect(api.headers['content-type']).toContain('application/problem+json');
  });
});

describe('widget files', () => {
  it('serves the module compressed, cacheable, to any origin', async () => {
    const res = await t.app.inject({ url: '/widget/crypto-checkout.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers.vary).toBe('accept-encoding');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['cache-control']).toBe('public, max-age=3600, stale-while-revalidate=604800');
    expect(brotliDecompressSync(res.rawPayload).equals(entry)).toBe(true);

    const gz = await t.app.inject({ url: '/widget/crypto-checkout.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(entry)).toBe(true);
    expect(gz.headers.etag).not.toBe(res.headers.etag);

    const plain = await t.app.inject({ url: '/widget/crypto-checkout.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(entry)).toBe(true);
  });

  it('revalidates with the ETag', async () => {
    const first = await t.app.inject({ url: '/widget/crypto-checkout.js', headers: { 'accept-encoding': 'br' } });
    const again = await t.app.inject({ url: '/widget/crypto-checkout.js', headers: { 'accept-encoding': 'br', 'if-none-match': `W/"x", ${first.headers.etag}` } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    const stale = await t.app.inject({ url: '/widget/crypto-checkout.js', headers: { 'accept-encoding': 'br', 'if-none-match': '"old"' } });
    expect(stale.statusCode).toBe(200);
  });

  it('makes the versioned URL and the language chunks immutable', async () => {
    const page = await t.app.inject({ url: `/checkout/${await checkoutToken('en')}`, headers: { accept: 'text/html' } });
    const src = /src="([^"]+)"/.exec(page.body)![1]!;
    const versioned = await t.app.inject({ url: src });
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const wrongVersion = await t.app.inject({ url: '/widget/crypto-checkout.js?v=0000000000000000' });
    expect(wrongVersion.headers['cache-control']).toBe('public, max-age=3600, stale-while-revalidate=604800');
    const chunk = await t.app.inject({ url: `/widget/${arChunk}` });
    expect(chunk.statusCode).toBe(200);
    expect(chunk.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(chunk.body).toContain('الدفع');
  });

  it('serves nothing else', async () => {
    for (const url of ['/widget/nope.js', '/widget/..%2Fpackage.json', '/widget/custom-elements.json']) {
      expect((await t.app.inject({ url })).statusCode, url).toBe(404);
    }
  });
});
