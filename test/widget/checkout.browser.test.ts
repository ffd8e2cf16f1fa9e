/**
 * The checkout widget in real Chromium (playwright-core) against a real
 * Kassa server and job worker: framed by a merchant page on another origin,
 * dropped into a merchant page as a tag, live deposits, the currency picker,
 * expiry, Arabic, keyboard use and an axe-core scan.
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`); without it the file is
 * skipped with a message, unless KASSA_REQUIRE_BROWSER=1 makes that a failure.
 * KASSA_SCREENSHOTS=1 also writes docs/screenshots/*.png.
 */
import type { Runner } from 'graphile-worker';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Frame, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../db/embedded.js';
import { expirePayment } from '../../server/modules/payments/expiry.service.js';
import { qrPath } from '../../widget/qr.js';
import { startTestApp, type TestApp, type TestBusiness } from '../helpers/app.js';
import { eventually, startTestWorker } from '../helpers/worker.js';

const CHROMIUM = '/usr/bin/chromium';
const MODE = existsSync(CHROMIUM) ? 'run' : process.env.KASSA_REQUIRE_BROWSER === '1' ? 'fail' : 'skip';
if (MODE === 'skip') {
  console.warn(`[checkout.browser] skipped: ${CHROMIUM} not found (apt-get install chromium); KASSA_REQUIRE_BROWSER=1 turns this into a failure`);
}
const SHOTS = process.env.KASSA_SCREENSHOTS === '1';
const SHOT_DIR = new URL('../../docs/screenshots/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 900 };
const NARROW = { width: 320, height: 900 };
/** The smallest phone the checkout is made for (CONTRACT §9). */
const PHONE = { width: 320, height: 568 };

let t: TestApp;
let worker: Runner;
let browser: Browser;
let merchant: Server;
/** The Kassa server (127.0.0.1) and the merchant's site (localhost): two origins. */
let kassaBase: string;
let shopBase: string;

type Created = { paymentId: string; paymentUrl: string };

async function createPayment(body: Record<string, unknown>): Promise<Created> {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `browser-${randomUUID()}`,
    businessId: t.business.businessId,
    locale: 'en-US',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(200);
  const json = res.json() as { paymentUrl: string; paymentInfo: { paymentId: string } };
  expect(json.paymentUrl.startsWith(`${kassaBase}/checkout/`)).toBe(true);
  return { paymentId: json.paymentInfo.paymentId, paymentUrl: json.paymentUrl };
}

/** A payment of another business (its own settings), as that business. */
async function createPaymentOf(who: TestBusiness, body: Record<string, unknown>): Promise<Created & { info: Record<string, string> }> {
  const res = await t.signed('POST', '/v1/payments', { clientPaymentId: `browser-${randomUUID()}`, businessId: who.businessId, locale: 'en', ...body }, who);
  expect(res.statusCode, res.body).toBe(200);
  const json = res.json() as { paymentUrl: string; paymentInfo: Record<string, string> };
  return { paymentId: json.paymentInfo.paymentId!, paymentUrl: json.paymentUrl, info: json.paymentInfo };
}

/** Assert that an element lies wholly inside the viewport as it is (no scrolling); the message gives its box. */
async function expectOnFirstScreen(locator: Locator, viewport: { width: number; height: number }): Promise<void> {
  const box = await locator.boundingBox();
  const inside = !!box && box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height;
  expect(inside, `${String(locator)} at ${JSON.stringify(box)} in ${viewport.width}×${viewport.height}`).toBe(true);
}

const btcPayment = (extra: Record<string, unknown> = {}) =>
  createPayment({ depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC', ...extra });

async function deposit(paymentId: string, amount: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount, ...extra });
  expect(res.statusCode, res.body).toBe(200);
}

/** The merchant's site: a page framing the checkout, a page with the drop-in tag, and a thank-you page. */
function merchantSite(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', shopBase);
    const payment = url.searchParams.get('payment') ?? '';
    const attr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const page = (body: string) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Demo shop</title>
<style>body{margin:0;font:16px system-ui;background:#fafafa}main{max-width:520px;margin:0 auto;padding:16px 0}h1{font-size:20px;margin:0 16px 12px}iframe{display:block;width:100%;height:860px;border:0}</style></head>
<body><main><h1>Demo shop</h1>${body}</main></body></html>`);
    };
    if (url.pathname === '/frame') {
      page(`<iframe src="${attr(payment)}" title="Checkout" allow="clipboard-write"></iframe>`);
    } else if (url.pathname === '/tag') {
      const locale = url.searchParams.get('locale');
      page(`<script>window.kassaEvents=[];for(const n of ['checkout-status','checkout-complete'])document.addEventListener(n,(e)=>window.kassaEvents.push({type:e.type,bubbles:e.bubbles,composed:e.composed,detail:e.detail}));</script>
<script type="module" src="${kassaBase}/widget/crypto-checkout.js"></script>
<crypto-checkout payment-url="${attr(payment)}"${locale ? ` locale="${attr(locale)}"` : ''}></crypto-checkout>`);
    } else if (url.pathname === '/layouts') {
      // Shrink-to-fit boxes a merchant puts a checkout in: a modal <dialog>, a centred flex column, a row beside an order summary.
      page(`<script>window.kassaEvents=[];for(const n of ['checkout-status','checkout-complete'])document.addEventListener(n,(e)=>window.kassaEvents.push({type:e.type,detail:e.detail}));</script>
<script type="module" src="${kassaBase}/widget/crypto-checkout.js"></script>
<dialog id="modal"><crypto-checkout id="in-dialog" payment-url="${attr(payment)}"></crypto-checkout></dialog>
<div style="display:flex;flex-direction:column;align-items:center"><crypto-checkout id="in-column" payment-url="${attr(payment)}"></crypto-checkout></div>
<div style="display:flex;gap:16px"><aside style="flex:0 0 200px">Order #42</aside><crypto-checkout id="in-row" payment-url="${attr(payment)}"></crypto-checkout></div>
<div id="elsewhere"></div>
<script>document.getElementById('modal').showModal()</script>`);
    } else if (url.pathname === '/thanks') {
      page('<p id="thanks">Thank you for your order.</p>');
    } else {
      res.writeHead(404).end();
    }
  });
}

async function open(
  url: string,
  viewport = DESKTOP,
  options: { bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[]; apiCalls: string[] }> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce', bypassCSP: options.bypassCSP ?? false });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shopBase });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: kassaBase });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && !/favicon/.test(`${m.text()} ${m.location().url}`) && errors.push(`${m.text()} (${m.location().url})`));
  page.on('pageerror', (e) => errors.push(String(e)));
  // The checkout API procedures the page called (get, choose, updates), in order.
  const apiCalls: string[] = [];
  page.on('request', (r) => {
    const procedure = /\/checkout\/api\/(\w+)/.exec(r.url())?.[1];
    if (procedure) apiCalls.push(procedure);
  });
  await page.goto(url);
  return { context, page, errors, apiCalls };
}

/** Full-page unless the page frames the checkout (full-page captures leave out-of-process frames blank). */
async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOT_DIR, { recursive: true });
  await page.mouse.move(0, 0);
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: new URL(`${name}.png`, SHOT_DIR).pathname, fullPage });
}

/** The picker's choice for one currency code. */
const option = (page: Page, code: string) => page.locator('label.opt').filter({ has: page.locator('b', { hasText: new RegExp(`^${code}$`) }) });

/** The focused element, through shadow roots, described for assertions. */
const focused = (page: Page) =>
  page.evaluate(() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el) return null;
    const input = el as HTMLInputElement;
    const ring = el.tagName === 'INPUT' ? el.nextElementSibling! : el;
    return {
      tag: el.tagName.toLowerCase(),
      type: el.getAttribute('type'),
      name: (el.getAttribute('aria-label') ?? (el.closest('label') ?? el).textContent ?? '').replace(/\s+/g, ' ').trim(),
      part: el.getAttribute('part'),
      checked: el.tagName === 'INPUT' ? input.checked : null,
      outline: `${getComputedStyle(ring).outlineStyle} ${getComputedStyle(ring).outlineWidth}`,
    };
  });

async function axeViolations(page: Page) {
  await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Element, o: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document.querySelector('crypto-checkout')!, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
}

const serious = (violations: { impact: string }[]) => violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');

describe.skipIf(MODE === 'skip')('checkout widget in Chromium', () => {
  beforeAll(async () => {
    if (MODE === 'fail') throw new Error(`KASSA_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: apt-get install chromium`);
    const port = await freePort();
    kassaBase = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0', PUBLIC_URL: kassaBase } });
    // The browser counts down against its own clock: start the test clock at real time.
    t.clock.current = new Date();
    await t.app.listen({ port, host: '127.0.0.1' });
    worker = await startTestWorker(t.deps);
    merchant = merchantSite();
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    shopBase = `http://localhost:${(merchant.address() as { port: number }).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (merchant ? merchant.close(resolve) : resolve(undefined)));
    await worker?.stop();
    await t?.close();
  });

  it('framed by a merchant on another origin, PARENT: the deposit arrives live, then the top window goes to the shop', async () => {
    const p = await btcPayment({ redirectUrl: `${shopBase}/thanks?order=parent`, redirectMode: 'PARENT' });
    const { context, page, errors } = await open(`${shopBase}/frame?payment=${encodeURIComponent(p.paymentUrl)}`);
    const frame = page.frameLocator('iframe');
    await expect.poll(() => frame.locator('[part=address] .value').textContent()).toMatch(/^(bc1|tb1|[13mn2])/);
    await expect(frame.locator('[part=qr] svg path').isVisible()).resolves.toBe(true);
    await shot(page, 'framed-pending-desktop-en', false);
    await deposit(p.paymentId, '0.01');
    await expect.poll(() => frame.getByRole('heading', { name: 'Payment received' }).count(), { timeout: 10_000 }).toBe(1);
    await expect(frame.locator('[part=redirect]').textContent()).resolves.toMatch(/Returning to the shop in [1-5] s/);
    await page.waitForURL(`${shopBase}/thanks?order=parent`, { timeout: 10_000 });
    await expect(page.locator('#thanks').textContent()).resolves.toBe('Thank you for your order.');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('framed, SELF: only the frame goes to the shop', async () => {
    const p = await btcPayment({ redirectUrl: `${shopBase}/thanks?order=self`, redirectMode: 'SELF' });
    const { context, page } = await open(`${shopBase}/frame?payment=${encodeURIComponent(p.paymentUrl)}`);
    const frame = page.frameLocator('iframe');
    await expect.poll(() => frame.locator('[part=address]').count()).toBe(1);
    await deposit(p.paymentId, '0.01');
    const thanks = await eventually(async () => page.frames().find((f: Frame) => f.url() === `${shopBase}/thanks?order=self`), 15_000, 'frame redirected');
    await expect(thanks.locator('#thanks').textContent()).resolves.toBe('Thank you for your order.');
    expect(page.url()).toBe(`${shopBase}/frame?payment=${encodeURIComponent(p.paymentUrl)}`);
    await context.close();
  });

  it('drop-in tag at 320 px: address and QR visible, checkout-status and checkout-complete fire, no redirect without redirectUrl', async () => {
    const p = await btcPayment();
    const { context, page, errors } = await open(`${shopBase}/tag?payment=${encodeURIComponent(p.paymentUrl)}`, NARROW);
    const address = page.locator('[part=address] .value');
    await expect.poll(() => address.isVisible()).toBe(true);
    const box = (await address.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(320);
    const qr = (await page.locator('[part=qr] svg').boundingBox())!;
    expect(qr.width).toBeGreaterThan(150);
    expect(qr.x + qr.width).toBeLessThanOrEqual(320);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    // The QR drawn by the bundle is the one qrPath draws (test/widget/qr.unit.test.ts decodes that back to the URI).
    const uri = (await page.locator('[part=qr] a').getAttribute('href'))!;
    expect(uri).toMatch(/^bitcoin:\w+\?amount=0\.01$/);
    await expect(page.locator('[part=qr] svg path').getAttribute('d')).resolves.toBe(qrPath(uri).d);
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('0.01\u00a0BTC');
    await expect(page.locator('[part=countdown]').textContent()).resolves.toMatch(/^(30:00|29:\d\d)$/);
    await shot(page, 'tag-pending-320-en');

    await deposit(p.paymentId, '0.01');
    await expect.poll(() => page.getByRole('heading', { name: 'Payment received' }).count(), { timeout: 10_000 }).toBe(1);
    await expect(page.locator('[part=result]').textContent()).resolves.toContain('We received 0.01\u00a0BTC');
    await shot(page, 'tag-received-320-en');
    type Fired = { type: string; bubbles: boolean; composed: boolean; detail: Record<string, unknown> };
    const events = await page.evaluate(() => (window as unknown as { kassaEvents: Fired[] }).kassaEvents);
    const statuses = events.filter((e) => e.type === 'checkout-status');
    expect(statuses[0]!.detail).toMatchObject({ status: 'PENDING', previousStatus: null, currency: 'BTC' });
    expect(statuses.at(-1)!.detail).toMatchObject({ status: 'DEPOSITED', paid: '0.01', remaining: '0' });
    expect(statuses.every((e) => e.bubbles && e.composed)).toBe(true);
    const complete = events.filter((e) => e.type === 'checkout-complete');
    expect(complete).toEqual([{ type: 'checkout-complete', bubbles: true, composed: true, detail: { status: 'DEPOSITED', paid: '0.01', currency: 'BTC', redirectUrl: null } }]);
    // No redirectUrl: it stays on the success view.
    await page.waitForTimeout(1200);
    expect(page.url()).toContain('/tag?');
    await expect(page.locator('[part=redirect]').count()).resolves.toBe(0);
    await expect(page.locator('[part=back-button]').count()).resolves.toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('in shrink-to-fit boxes (a modal dialog, a centred flex column, a row beside an order summary) the card keeps its width; moved in the page, it fires nothing twice', async () => {
    const p = await btcPayment();
    const { context, page, errors } = await open(`${shopBase}/layouts?payment=${encodeURIComponent(p.paymentUrl)}`, DESKTOP);
    // The card's 440 px, or beside the summary what the shop's 520 px column leaves (520 − 200 − 16).
    for (const [id, width] of [['in-dialog', 440], ['in-column', 440], ['in-row', 304]] as const) {
      const amount = page.locator(`#${id} [part=amount] .big`);
      await expect.poll(() => amount.isVisible(), { timeout: 10_000 }).toBe(true);
      // It collapsed to 0 px here, the amount one character a line.
      const host = (await page.locator(`#${id}`).boundingBox())!;
      expect(host.width, id).toBe(width);
      expect((await amount.boundingBox())!.height, id).toBeLessThan(60);
    }
    await deposit(p.paymentId, '0.01');
    await expect.poll(() => page.locator('#in-column').getByRole('heading', { name: 'Payment received' }).count(), { timeout: 10_000 }).toBe(1);
    const completes = () => page.evaluate(() => (window as unknown as { kassaEvents: { type: string }[] }).kassaEvents.filter((e) => e.type === 'checkout-complete').length);
    await expect.poll(completes).toBe(3);
    // A merchant moves the paid checkout (into another container): it follows again, announcing nothing anew.
    await page.evaluate(() => document.getElementById('elsewhere')!.append(document.getElementById('in-column')!));
    await page.waitForTimeout(1500);
    expect(await completes()).toBe(3);
    await expect(page.locator('#elsewhere #in-column').getByRole('heading', { name: 'Payment received' }).count()).resolves.toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a REUSABLE link paid before shows the address again, sends no one away, and completes on the next transfer only', async () => {
    const p = await btcPayment({ type: 'REUSABLE', redirectUrl: `${shopBase}/thanks?order=reusable` });
    await deposit(p.paymentId, '0.01');
    await expect.poll(async () => (await t.signed('GET', `/v1/payments/${p.paymentId}`)).json().status, { timeout: 10_000 }).toBe('DEPOSITED');
    const { context, page, errors } = await open(p.paymentUrl, NARROW);
    const address = page.locator('[part=address] .value');
    await expect.poll(() => address.isVisible(), { timeout: 10_000 }).toBe(true);
    await expect(page.getByRole('heading', { name: 'Payment received' }).count()).resolves.toBe(0);
    await page.waitForTimeout(1500);
    expect(page.url()).toBe(p.paymentUrl);
    await expect(page.locator('[part=redirect]').count()).resolves.toBe(0);
    // This customer pays: received, with what they paid, then back to the shop.
    await deposit(p.paymentId, '0.002');
    await expect.poll(() => page.getByRole('heading', { name: 'Payment received' }).count(), { timeout: 10_000 }).toBe(1);
    await expect(page.locator('[part=result]').textContent()).resolves.toContain('We received 0.002\u00a0BTC');
    await page.waitForURL(/\/thanks\?order=reusable/, { timeout: 15_000 });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("counts down on the server's clock: a device 40 minutes fast still shows the time left to pay", async () => {
    const p = await btcPayment();
    const context = await browser.newContext({ viewport: PHONE, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.clock.setSystemTime(Date.now() + 40 * 60_000);
    await page.goto(p.paymentUrl);
    const countdown = page.locator('[part=countdown]');
    await expect.poll(() => countdown.isVisible(), { timeout: 10_000 }).toBe(true);
    // It read 00:00 beside "Waiting for your payment…" while the server still took payments.
    await expect(countdown.textContent()).resolves.toMatch(/^(30:00|29:\d\d)$/);
    await expect(page.locator('[part=address]').count()).resolves.toBe(1);
    await context.close();
  });

  it('NEW payment: pick a currency, then pay; progress and the live status are announced', async () => {
    const p = await createPayment({ displayCurrency: 'EUR', displayAmount: '600.00', redirectUrl: `${shopBase}/thanks`, redirectMode: 'SELF' });
    const { context, page, errors } = await open(p.paymentUrl);
    await expect.poll(() => page.locator('[part=picker]').isVisible()).toBe(true);
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('€600.00');
    await expect(page.getByRole('button', { name: 'Continue' }).isDisabled()).resolves.toBe(true);
    await option(page, 'USDT').click();
    await expect(page.getByRole('group', { name: 'Network' }).isVisible()).resolves.toBe(true);
    await shot(page, 'hosted-new-desktop-en');
    await option(page, 'BTC').click();
    await expect(page.getByRole('group', { name: 'Network' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Continue' }).click();
    const address = page.locator('[part=address] .value');
    await expect.poll(() => address.isVisible()).toBe(true);
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('0.01\u00a0BTC');
    await expect(page.locator('[part=amount] .muted').textContent()).resolves.toBe('≈ €600.00 · Bitcoin');
    await expect(page.locator('[role=status]').textContent()).resolves.toBe('Waiting for your payment…');
    await expect(page.locator('[part=qr] svg').getAttribute('aria-label')).resolves.toBe('QR code for paying 0.01\u00a0BTC');
    await expect(page.locator('[part=qr] a').getAttribute('href')).resolves.toBe(`bitcoin:${await address.textContent()}?amount=0.01`);
    await shot(page, 'hosted-pending-desktop-en');

    // Partly paid: the remainder is due and shown, and the QR code asks for it (a phone pays the rest).
    await deposit(p.paymentId, '0.004');
    await expect.poll(() => page.locator('[role=status]').textContent(), { timeout: 10_000 }).toBe('Partly paid: 0.004\u00a0BTC received. Send the remaining 0.006\u00a0BTC.');
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('0.006\u00a0BTC');
    await expect(page.locator('[part=qr] a').getAttribute('href')).resolves.toBe(`bitcoin:${await address.textContent()}?amount=0.006`);
    await expect(page.locator('[part=qr] svg').getAttribute('aria-label')).resolves.toBe('QR code for paying 0.006\u00a0BTC');
    await expect(page.locator('[part=deposits] li').count()).resolves.toBe(1);
    await shot(page, 'hosted-underpaid-desktop-en');

    // The rest, held unconfirmed: seen → confirming.
    t.clock.advance(10 * 60_000);
    await deposit(p.paymentId, '0.006');
    t.clock.current = new Date();
    await expect.poll(() => page.locator('[role=status]').textContent(), { timeout: 10_000 }).toBe('Payment seen. Waiting for network confirmations…');
    await expect(page.locator('.steps li').evaluateAll((lis) => lis.map((li) => li.className))).resolves.toEqual(['done', 'current', 'todo']);
    await expect(page.locator('[part=deposits] .tag').allTextContents()).resolves.toEqual(['Received', 'Confirming']);
    await shot(page, 'hosted-confirming-desktop-en');
    await context.close();
    expect(errors).toEqual([]);
  });

  it('shows the expiry live, without a reload', async () => {
    const p = await btcPayment({ redirectUrl: `${shopBase}/thanks` });
    const { context, page, errors } = await open(p.paymentUrl, PHONE);
    await expect.poll(() => page.locator('[part=countdown]').isVisible()).toBe(true);
    try {
      t.clock.advance(31 * 60_000);
      await expect(expirePayment(t.deps, p.paymentId)).resolves.toBe('EXPIRED');
    } finally {
      t.clock.current = new Date();
    }
    await expect.poll(() => page.getByRole('heading', { name: 'Payment request expired' }).count(), { timeout: 10_000 }).toBe(1);
    await expect(page.locator('[part=address]').count()).resolves.toBe(0);
    await expect(page.locator('[part=qr]').count()).resolves.toBe(0);
    await expect(page.locator('[part=countdown]').count()).resolves.toBe(0);
    await expect(page.locator('[role=status]').textContent()).resolves.toBe('Payment request expired');
    await expect(page.locator('[part=result]').textContent()).resolves.toContain('Paid anyway? Contact Test shop with the transaction ID.');
    await expectOnFirstScreen(page.locator('[part=back-button]'), PHONE);
    await expect(page.locator('[part=back-button]').getAttribute('href')).resolves.toBe(`${shopBase}/thanks`);
    await expect(page.locator('[part=back-button]').getAttribute('target')).resolves.toBe('_top');
    await shot(page, 'hosted-expired-320x568-en', false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('blocks a high-risk deposit and says what to do', async () => {
    const p = await btcPayment();
    const { context, page } = await open(p.paymentUrl, NARROW);
    await expect.poll(() => page.locator('[part=address]').count()).toBe(1);
    await deposit(p.paymentId, '0.01', { riskScore: '9.5' });
    await expect.poll(() => page.getByRole('heading', { name: 'Payment blocked' }).count(), { timeout: 10_000 }).toBe(1);
    await expect(page.locator('[part=result]').textContent()).resolves.toContain('Contact the shop');
    await expect(page.locator('[part=deposits]').textContent()).resolves.toContain('0.01\u00a0BTC cannot be refunded');
    await shot(page, 'hosted-blocked-320-en');
    await context.close();
  });

  it('speaks Arabic right to left, and takes a locale attribute over the payment language', async () => {
    const p = await btcPayment({ locale: 'ar_EG' });
    const { context, page, errors, apiCalls } = await open(p.paymentUrl);
    await expect(page.locator('html').getAttribute('dir')).resolves.toBe('rtl');
    const base = page.locator('[part=base]');
    await expect.poll(() => base.getAttribute('dir')).toBe('rtl');
    await expect(base.getAttribute('lang')).resolves.toBe('ar');
    await expect.poll(() => page.locator('[part=header] h2').textContent()).toBe('الدفع');
    await expect(page.getByRole('button', { name: 'نسخ العنوان' }).isVisible()).resolves.toBe(true);
    await shot(page, 'hosted-pending-desktop-ar');
    await page.setViewportSize(NARROW);
    await shot(page, 'hosted-pending-320-ar');
    expect(errors).toEqual([]);
    // The hosted page inlines the first view: the widget only subscribes.
    expect(apiCalls).toEqual(['updates']);
    await context.close();

    const tag = await open(`${shopBase}/tag?locale=de_DE&payment=${encodeURIComponent(p.paymentUrl)}`, NARROW);
    await expect.poll(() => tag.page.locator('[part=header] h2').textContent()).toBe('Zahlung');
    // A drop-in tag asks for the first view.
    expect([...tag.apiCalls].sort()).toEqual(['get', 'updates']);
    await expect(tag.page.locator('[part=base]').getAttribute('dir')).resolves.toBe('ltr');
    await tag.context.close();
  });

  it('works by keyboard alone: picker, copy buttons, back to the shop, with a visible focus ring', async () => {
    const p = await createPayment({ displayCurrency: 'EUR', displayAmount: '600.00', redirectUrl: `${shopBase}/thanks` });
    const { context, page } = await open(p.paymentUrl);
    await expect.poll(() => page.locator('[part=picker]').isVisible()).toBe(true);
    await page.keyboard.press('Tab');
    let f = await focused(page);
    expect(f).toMatchObject({ tag: 'input', type: 'radio', outline: 'solid 2px' });
    for (let i = 0; i < 20 && !f?.name.startsWith('USDT'); i++) {
      await page.keyboard.press('ArrowDown');
      f = await focused(page);
    }
    expect(f).toMatchObject({ type: 'radio', checked: true });
    expect(f!.name).toMatch(/^USDT/);
    await page.keyboard.press('Tab');
    f = await focused(page);
    expect(f).toMatchObject({ tag: 'input', type: 'radio', checked: false });
    for (let i = 0; i < 5 && !f?.name.startsWith('TRON'); i++) {
      await page.keyboard.press('ArrowDown');
      f = await focused(page);
    }
    expect(f!.name).toMatch(/^TRON \(TRC-20\)/);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ tag: 'button', name: 'Continue', part: 'button', outline: 'solid 2px' });
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ tag: 'a', name: 'Back to the shop', part: 'back-button', outline: 'solid 2px' });
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');

    await expect.poll(() => page.locator('[part=address]').count()).toBe(1);
    // Focus moved to the new heading, not lost: the walk continues from there.
    const walk: { name: string; outline: string }[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      walk.push((await focused(page))!);
    }
    expect(walk.map((w) => w.name)).toEqual(['Copy amount', 'Copy address', 'Open in wallet', 'Back to the shop']);
    expect(walk.every((w) => w.outline === 'solid 2px')).toBe(true);
    await expect(page.locator('[part=address] .value').textContent()).resolves.toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('[part=address] [part=copy-button]').textContent()).toContain('Copied');
    const clipboard = await page.evaluate(() => navigator.clipboard.readText());
    await expect(page.locator('[part=address] .value').textContent()).resolves.toBe(clipboard);
    await context.close();
  });

  it('has no serious or critical axe-core violations (picker, pending, received; tag and hosted page)', async () => {
    const fresh = await createPayment({ displayCurrency: 'EUR', displayAmount: '25.00', redirectUrl: `${shopBase}/thanks` });
    const tag = await open(`${shopBase}/tag?payment=${encodeURIComponent(fresh.paymentUrl)}`, NARROW);
    await expect.poll(() => tag.page.locator('[part=picker]').isVisible()).toBe(true);
    await option(tag.page, 'USDC').click();
    const picker = await axeViolations(tag.page);
    expect(serious(picker), JSON.stringify(picker, null, 1)).toEqual([]);
    await tag.context.close();

    const p = await btcPayment({ redirectUrl: `${shopBase}/thanks`, locale: 'fr-FR' });
    const hosted = await open(p.paymentUrl, DESKTOP, { bypassCSP: true });
    await expect.poll(() => hosted.page.locator('[part=address]').count()).toBe(1);
    const pending = await axeViolations(hosted.page);
    expect(serious(pending), JSON.stringify(pending, null, 1)).toEqual([]);
    await deposit(p.paymentId, '0.02');
    await expect.poll(() => hosted.page.locator('[part=result]').count(), { timeout: 10_000 }).toBe(1);
    await expect(hosted.page.locator('[part=result] h3').textContent()).resolves.toBe('Paiement reçu');
    await expect(hosted.page.locator('[part=result]').textContent()).resolves.toContain('Vous avez envoyé plus que le montant dû.');
    await shot(hosted.page, 'hosted-overpaid-desktop-fr');
    const received = await axeViolations(hosted.page);
    expect(serious(received), JSON.stringify(received, null, 1)).toEqual([]);
    await hosted.context.close();
  });

  it('at 320×568: the picker, then the network choice, then the address, each on the first screen; merchant, fee share and test mode shown', async () => {
    const shop = await t.addBusiness({ name: 'Corner Books', userFeeSharePercent: '50' });
    const p = await createPaymentOf(shop, { displayCurrency: 'EUR', displayAmount: '600.00', redirectUrl: `${shopBase}/thanks` });
    const fee = p.info.expectedDisplayDistributedUserServiceFee!;
    expect(fee).toBe('3.00');
    const { context, page, errors } = await open(p.paymentUrl, PHONE);
    await expect.poll(() => page.locator('[part=picker]').isVisible()).toBe(true);
    await expect(page.locator('[part=merchant]').textContent()).resolves.toBe('Corner Books');
    await expect(page.locator('[part=test-mode]').textContent()).resolves.toBe('TEST MODE · no real money');
    await expect(page.locator('[part=fee]').textContent()).resolves.toBe('Includes €3.00: your share of the service fee.');
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('€603.00');
    const currencies = page.locator('label.opt');
    expect(await currencies.count()).toBe(12);
    for (const box of await currencies.all()) await expectOnFirstScreen(box, PHONE);
    await shot(page, 'hosted-new-320x568-en', false);

    await option(page, 'USDC').click();
    await shot(page, 'hosted-network-320x568-en', false);
    const networks = page.getByRole('group', { name: 'Network' }).locator('label.opt');
    expect(await networks.count()).toBe(4);
    for (const box of await networks.all()) await expectOnFirstScreen(box, PHONE);
    await expectOnFirstScreen(page.getByRole('button', { name: 'Continue' }), PHONE);
    await shot(page, 'hosted-network-320x568-en', false);
    await networks.filter({ hasText: 'TRON (TRC-20)' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    const address = page.locator('[part=address]').first();
    await expect.poll(() => address.isVisible()).toBe(true);
    await expect(page.locator('[part=address] .value').first().textContent()).resolves.toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    await expectOnFirstScreen(address, PHONE);
    await expectOnFirstScreen(page.locator('[part=amount]'), PHONE);
    // Nothing scrolled to get there.
    expect(await page.evaluate(() => [window.scrollX, window.scrollY, document.documentElement.scrollWidth])).toEqual([0, 0, 320]);
    await shot(page, 'hosted-pending-320x568-en', false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('underpaid, the transfer in review: shows the amount still due and where to send it', async () => {
    const p = await btcPayment();
    const { context, page, errors } = await open(p.paymentUrl, PHONE);
    await expect.poll(() => page.locator('[part=address]').count()).toBe(1);
    await deposit(p.paymentId, '0.004', { riskScore: '6' });
    await expect.poll(() => page.locator('[role=status]').textContent(), { timeout: 10_000 }).toBe('Payment seen. It is being checked, which can take a while.');
    await expect(page.locator('[part=amount] .label').textContent()).resolves.toBe('Still due');
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('0.006\u00a0BTC');
    await expect(page.locator('[part=deposits] .tag').allTextContents()).resolves.toEqual(['In review']);
    // The address stays, and the QR code asks for what is still due.
    await expectOnFirstScreen(page.locator('[part=address]'), PHONE);
    await expect(page.locator('[part=qr] a').getAttribute('href')).resolves.toMatch(/\?amount=0\.006$/);
    await shot(page, 'hosted-review-underpaid-320x568-en', false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('Stellar: the memo is called a memo; a covering transfer on its way shows its amount, not an amount due', async () => {
    const p = await createPayment({ depositCurrency: 'XLM', depositAmount: '25', network: 'XLM' });
    const { context, page, errors } = await open(p.paymentUrl, PHONE);
    await expect.poll(() => page.locator('[part=address]').count()).toBe(2);
    await expect(page.locator('.pay .label').allTextContents()).resolves.toEqual(['Deposit address', 'Memo']);
    await expect(page.locator('.pay .note.warning').textContent()).resolves.toBe('Include the memo, or your payment may be lost.');
    await expect(page.getByRole('button', { name: 'Copy memo' }).count()).resolves.toBe(1);
    // Held unconfirmed: its confirmation job is due 10 minutes from now (the test clock), which the worker does not reach.
    t.clock.advance(10 * 60_000);
    await deposit(p.paymentId, '25', { depositCurrency: 'XLM', network: 'XLM' });
    t.clock.current = new Date();
    await expect.poll(() => page.locator('[role=status]').textContent(), { timeout: 10_000 }).toBe('Payment seen. Waiting for network confirmations…');
    await expect(page.locator('[part=amount] .label').textContent()).resolves.toBe('Amount');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('live mode: no test mark', async () => {
    const p = await btcPayment();
    // The flag is read per view from the config: live mode's view, without starting live chains.
    t.deps.config.sandbox = false;
    try {
      const { context, page } = await open(p.paymentUrl, PHONE);
      await expect.poll(() => page.locator('[part=address]').count()).toBe(1);
      await expect(page.locator('[part=test-mode]').count()).resolves.toBe(0);
      await expect(page.locator('[part=merchant]').textContent()).resolves.toBe('Test shop');
      await context.close();
    } finally {
      t.deps.config.sandbox = true;
    }
  });

  it('reached under a second host name, the hosted page follows the payment live from that host', async () => {
    const p = await btcPayment();
    const second = p.paymentUrl.replace(kassaBase, kassaBase.replace('127.0.0.1', 'localhost'));
    expect(second).not.toBe(p.paymentUrl);
    const { context, page, errors, apiCalls } = await open(second, PHONE);
    const hosts = new Set<string>();
    page.on('request', (r) => hosts.add(new URL(r.url()).host));
    await expect.poll(() => page.locator('[part=address]').count()).toBe(1);
    await deposit(p.paymentId, '0.01');
    await expect.poll(() => page.getByRole('heading', { name: 'Payment received' }).count(), { timeout: 10_000 }).toBe(1);
    expect(apiCalls).toEqual(['updates']);
    expect([...hosts].every((h) => h.startsWith('localhost:'))).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('hosted page with JavaScript off: the server-rendered first view still shows the amount, the address and the QR code', async () => {
    const p = await btcPayment();
    const context = await browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(p.paymentUrl);
    const address = (await t.signed('GET', `/v1/payments/${p.paymentId}`)).json().walletAddress as string;
    expect(address).toMatch(/^(bc1|tb1|[13mn2])/);
    await expect(page.locator('[part=address] .value').textContent()).resolves.toBe(address);
    await expect(page.locator('[part=amount] .big').textContent()).resolves.toBe('0.01\u00a0BTC');
    await expect(page.locator('[part=qr] svg path').isVisible()).resolves.toBe(true);
    await expectOnFirstScreen(page.locator('[part=address]'), PHONE);
    await context.close();
  });

  it('once the module runs, it renders over the server-rendered view: one card, and never the skeleton while the language loads', async () => {
    const p = await createPayment({ depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC', locale: 'de-DE' });
    const context = await browser.newContext({ viewport: DESKTOP });
    // Every frame, before it is painted: did the card ever show the loading skeleton?
    await context.addInitScript(`(() => {
      window.__skeleton = false;
      const tick = () => {
        if (document.querySelector('crypto-checkout')?.shadowRoot?.querySelector('.skeleton')) window.__skeleton = true;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    })()`);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // The German strings arrive late, as on a slow network: the server's view must stay on screen meanwhile.
    await page.route(/\/widget\/locale-de-/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    await page.goto(p.paymentUrl);
    await expect(page.locator('[part=address] .value').isVisible()).resolves.toBe(true);
    await deposit(p.paymentId, '0.004');
    // Live again: the module's own render, following the payment.
    await expect.poll(() => page.locator('[part=deposits] li').count(), { timeout: 10_000 }).toBe(1);
    // Seen first, then confirmed (the worker's job): the rest still due, in German.
    await expect.poll(() => page.locator('[part=status]').textContent(), { timeout: 10_000 }).toMatch(/0,006\u00a0BTC/);
    const cards = await page.evaluate(() => document.querySelector('crypto-checkout')!.shadowRoot!.querySelectorAll('[part=base]').length);
    expect(cards).toBe(1);
    await expect(page.evaluate(() => (window as unknown as { __skeleton: boolean }).__skeleton)).resolves.toBe(false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it.runIf(SHOTS)('screenshots: received and NEW in Arabic, and at 320 px', async () => {
    const p = await createPayment({ displayCurrency: 'EUR', displayAmount: '600.00', locale: 'ar', redirectUrl: `${shopBase}/thanks` });
    const ar = await open(p.paymentUrl, NARROW);
    await expect.poll(() => ar.page.locator('[part=picker]').isVisible()).toBe(true);
    await option(ar.page, 'USDT').click();
    await shot(ar.page, 'hosted-new-320-ar');
    await option(ar.page, 'BTC').click();
    await ar.page.getByRole('button', { name: 'متابعة' }).click();
    await expect.poll(() => ar.page.locator('[part=address]').count()).toBe(1);
    await deposit(p.paymentId, '0.01');
    await expect.poll(() => ar.page.locator('[part=result]').count(), { timeout: 10_000 }).toBe(1);
    await ar.page.setViewportSize(DESKTOP);
    await shot(ar.page, 'hosted-received-desktop-ar');
    await ar.context.close();

    const en = await btcPayment({ redirectUrl: `${shopBase}/thanks` });
    const page = await open(en.paymentUrl, NARROW);
    await expect.poll(() => page.page.locator('[part=address]').count()).toBe(1);
    await shot(page.page, 'hosted-pending-320-en');
    await page.context.close();
  });
});
