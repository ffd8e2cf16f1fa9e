/**
 * Secrets and headers (issue 7.7):
 *
 * - at rest: after real traffic (payments, a deposit, a withdrawal, callbacks
 *   delivered and redelivered, operators, extra keys), every text, json and
 *   array column of every table — Kassa's and graphile-worker's — is dumped
 *   and searched for each secret and every 12-character fragment of it;
 * - in logs: a server logging at trace level into memory is driven with
 *   signed requests, failing authentication, operator calls and callback
 *   redelivery; no log line holds a secret, an operator token or an
 *   Authorization header value (signatures included);
 * - security headers (helmet) on every kind of response: API, errors, docs,
 *   metrics, checkout page, widget, tRPC;
 * - CORS closed on the merchant API (preflight and simple requests from
 *   another origin get no access-control-allow-origin), open on
 *   /checkout/api/* and /widget/crypto-checkout.js.
 */
import type { LightMyRequestResponse } from 'fastify';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackDeliveries } from '../../db/schema.js';
import { createServer, type KassaServer } from '../../server/edges/app.js';
import { createApiKey, createOperator } from '../../server/modules/businesses/business.service.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { postEntries } from '../../server/modules/ledger/ledger.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startTestWorker } from '../helpers/worker.js';
import { Receiver } from '../modules/callbacks/receiver.js';
import { waitFor } from './support.js';

const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

let t: TestApp;
let worker: Runner | null = null;
let logged: KassaServer;
const rx = new Receiver();
const logLines: string[] = [];
/** Every secret handed out during the test, and every Authorization header value sent. */
const secrets: { what: string; value: string }[] = [];
const authorizations: string[] = [];
let operatorToken = '';
let checkoutToken = '';
let paymentId = '';

const remember = (what: string, value: string) => secrets.push({ what, value });

beforeAll(async () => {
  await rx.start();
  t = await startTestApp({
    env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0', KASSA_SANDBOX_BROADCAST_DELAY_S: '0', KASSA_CALLBACK_RETRY_INTERVAL_S: '1' },
    business: { withdrawalCallbackUrl: rx.url('/withdrawals'), paymentCallbackUrl: rx.url('/payments') },
  });
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
  remember('API secret', t.business.apiSecret);
  remember('callback secret', t.business.callbackSecret);
  const extra = await createApiKey(t.db.db, t.deps.masterKey, t.business.businessId, ['READ_PAYMENT']);
  remember('second API secret', extra.apiSecret);
  const op = await createOperator(t.db.db, 'ops', 'admin');
  operatorToken = op.token;
  remember('operator token', op.token);

  // A server whose log (trace level: every request) goes into memory.
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  logged = await createServer({ deps: { ...t.deps, config: { ...t.deps.config, logLevel: 'trace' } }, logger: { stream } });
  await logged.app.ready();
  worker = await startTestWorker(t.deps);
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await logged?.stop();
  await t?.close();
  await rx.stop();
});

/** A signed request through the logging server; its Authorization value is remembered. */
function signed(method: 'GET' | 'POST', path: string, body?: unknown, who = t.business): Promise<LightMyRequestResponse> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const authorization = authorizationHeader(who.apiKey, who.apiSecret, { method, path, body: payload });
  authorizations.push(authorization);
  return logged.app.inject({ method, url: path, payload: payload || undefined, headers: { ...(payload ? { 'content-type': 'application/json' } : {}), authorization } });
}

function raw(method: 'GET' | 'POST' | 'OPTIONS' | 'DELETE', url: string, headers: Record<string, string> = {}, payload?: string) {
  if (headers.authorization) authorizations.push(headers.authorization);
  return logged.app.inject({ method, url, headers, payload });
}

describe('traffic that touches every secret', () => {
  it('payments, a deposit, a withdrawal, callbacks delivered and redelivered, failing authentication, operator calls', { timeout: 60_000 }, async () => {
    await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '5000.00', kind: 'TEST' }], new Date());
    const created = await signed('POST', '/v1/payments', { clientPaymentId: 'sec-1', businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.001', network: 'BTC' });
    expect(created.statusCode, created.body).toBe(200);
    paymentId = created.json().paymentInfo.paymentId;
    checkoutToken = String(created.json().paymentUrl).split('/checkout/')[1]!;
    expect((await signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.001' })).statusCode).toBe(200);
    const w = await signed('POST', '/v1/withdrawals', { clientWithdrawalId: 'sec-w', businessId: t.business.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.001' });
    expect(w.statusCode, w.body).toBe(200);
    expect((await signed('GET', `/v1/payments/${paymentId}`)).statusCode).toBe(200);
    expect((await signed('GET', '/v1/payments?limit=5')).statusCode).toBe(200);

    // failing authentication, including a client that wrongly sends its secret as the signature
    const path = '/v1/payments?limit=1';
    const ts = Math.floor(Date.now() / 1000);
    for (const authorization of [
      authorizationHeader(t.business.apiKey, 'ks_wrong', { method: 'GET', path }),
      `KASSA-API api-key=${t.business.apiKey},signature=${t.business.apiSecret},timestamp=${ts}`,
      `Bearer ${t.business.apiSecret}`,
      `KASSA-API api-key=${t.business.apiKey},signature=${authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'GET', path }).split('signature=')[1]!.split(',')[0]},timestamp=${ts - 1000}`,
    ]) {
      expect((await raw('GET', path, { authorization })).statusCode).toBe(401);
    }
    // operator calls over tRPC: valid and invalid bearer tokens
    const trpcPath = `/trpc/payments.get?input=${encodeURIComponent(JSON.stringify({ paymentId }))}`;
    expect((await raw('GET', trpcPath, { authorization: `Bearer ${operatorToken}` })).statusCode).toBe(200);
    expect((await raw('GET', trpcPath, { authorization: `Bearer ${operatorToken.slice(0, -2)}xx` })).statusCode).toBe(401);

    // callbacks: the payment's status changes and the withdrawal's outcome are delivered…
    await waitFor(async () => rx.hitsFor('/withdrawals').length >= 1 && rx.hitsFor('/payments').length >= 2, 20_000, 'callbacks to be delivered');
    // …and an operator redelivers one (same webhook-id, signed again with the callback secret)
    const [delivery] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.kind, 'WITHDRAWAL'));
    await waitFor(async () => (await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, delivery!.id)))[0]!.status === 'DELIVERED', 10_000, 'delivery');
    const redeliver = await raw('POST', '/trpc/callbacks.redeliver', { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, JSON.stringify({ deliveryId: delivery!.id }));
    expect(redeliver.statusCode, redeliver.body).toBe(200);
    await waitFor(async () => rx.hitsFor('/withdrawals').length >= 2, 10_000, 'the redelivered callback');
    // the end user's checkout: the page (token in the path) and its API (token in the input query)
    expect((await raw('GET', `/checkout/${checkoutToken}`)).statusCode).toBe(200);
    expect((await raw('GET', `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token: checkoutToken }))}`)).statusCode).toBe(200);
    expect(logLines.length).toBeGreaterThan(10);
  });
});

/** The secret itself, its random part, encodings of it, and every 12-character fragment of the random part. */
function needles(value: string): string[] {
  const body = value.replace(/^(ks_|whsec_|kop_|kk_)/, '');
  const out = new Set([value, body, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex'), Buffer.from(body).toString('base64')]);
  for (let i = 0; i + 12 <= body.length; i++) out.add(body.slice(i, i + 12));
  return [...out];
}

function findLeaks(text: string): string[] {
  const leaks: string[] = [];
  for (const s of secrets) {
    const hit = needles(s.value).find((n) => text.includes(n));
    if (hit) leaks.push(`${s.what} (fragment ${JSON.stringify(hit)})`);
  }
  return leaks;
}

describe('secrets at rest', () => {
  it('no secret or fragment of one in any text, json or array column of any table (a full dump)', async () => {
    const columns = await t.db.sql<{ schema: string; table: string; column: string }[]>`
      select c.table_schema as schema, c.table_name as table, c.column_name as column
      from information_schema.columns c join information_schema.tables t2 on t2.table_schema = c.table_schema and t2.table_name = c.table_name
      where t2.table_type = 'BASE TABLE' and c.table_schema in ('public', 'graphile_worker')
        and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea'))`;
    expect(columns.length).toBeGreaterThan(20);
    const leaks: string[] = [];
    let cells = 0;
    for (const c of columns) {
      const rows = await t.db.sql.unsafe<{ v: string | null }[]>(`select "${c.column}"::text as v from "${c.schema}"."${c.table}"`);
      for (const row of rows) {
        if (row.v === null) continue;
        cells++;
        for (const leak of findLeaks(row.v)) leaks.push(`${c.schema}.${c.table}.${c.column}: ${leak}`);
      }
    }
    expect(cells).toBeGreaterThan(100);
    expect(leaks).toEqual([]);
  });
});

describe('secrets in logs', () => {
  it('no log line holds a secret, an operator token or an Authorization header value', () => {
    const leaks: string[] = [];
    const signatures = authorizations.map((a) => /signature=([^,]+)/.exec(a)?.[1]).filter((s): s is string => !!s && s.length >= 16);
    logLines.forEach((line, i) => {
      for (const leak of findLeaks(line)) leaks.push(`line ${i}: ${leak}`);
      for (const a of authorizations) if (line.includes(a)) leaks.push(`line ${i}: an Authorization header value`);
      for (const s of signatures) if (line.includes(s)) leaks.push(`line ${i}: a request signature`);
      if (line.includes(checkoutToken)) leaks.push(`line ${i}: the checkout token`);
    });
    // the checkout requests were logged, their token masked
    expect(logLines.some((l) => l.includes('"url":"/checkout/…"'))).toBe(true);
    expect(logLines.some((l) => l.includes('"url":"/checkout/api/get?…"'))).toBe(true);
    expect(leaks).toEqual([]);
    // the log did see the requests (so the check is not vacuous)
    expect(logLines.some((l) => l.includes('/v1/payments'))).toBe(true);
    expect(logLines.some((l) => l.includes('/trpc/'))).toBe(true);
  });
});

describe('security headers on every response', () => {
  const requests: [string, () => Promise<LightMyRequestResponse>, 'default' | 'framable'][] = [
    ['API 200', () => signed('GET', '/v1/payments?limit=1'), 'default'],
    ['API 201/200 create', () => signed('POST', '/v1/payments', { clientPaymentId: 'hdr-1', businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '1.00' }), 'default'],
    ['API 400', () => signed('POST', '/v1/payments', { clientPaymentId: 'hdr-2' }), 'default'],
    ['API 401', () => raw('GET', '/v1/payments'), 'default'],
    ['API 404 record', () => signed('GET', '/v1/payments/00000000-0000-4000-8000-000000000000'), 'default'],
    ['404 route', () => raw('GET', '/nope'), 'default'],
    ['413', () => raw('POST', '/v1/payments', { 'content-type': 'application/json' }, `{"a":"${'x'.repeat(70_000)}"}`), 'default'],
    ['415', () => raw('POST', '/v1/payments', { 'content-type': 'text/plain' }, 'hello'), 'default'],
    ['400 malformed JSON', () => raw('POST', '/v1/payments', { 'content-type': 'application/json' }, '{'), 'default'],
    ['400 malformed URL', () => raw('GET', '/v1/payments/%ZZ'), 'default'],
    ['/health', () => raw('GET', '/health'), 'default'],
    ['/ready', () => raw('GET', '/ready'), 'default'],
    ['/metrics', () => raw('GET', '/metrics'), 'default'],
    ['/openapi.json', () => raw('GET', '/openapi.json'), 'default'],
    ['/docs', () => raw('GET', '/docs'), 'default'],
    ['widget', () => raw('GET', '/widget/crypto-checkout.js'), 'default'],
    ['checkout page', () => raw('GET', `/checkout/${checkoutToken}`, { accept: 'text/html' }), 'framable'],
    ['checkout page 404', () => raw('GET', '/checkout/AAAAAAAAAAAAAAAAAAAAAA', { accept: 'text/html' }), 'framable'],
    ['checkout tRPC', () => raw('GET', `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token: checkoutToken }))}`), 'default'],
    ['checkout tRPC error', () => raw('GET', `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token: 'x' }))}`), 'default'],
    ['internal tRPC 401', () => raw('GET', '/trpc/payments.list?input=%7B%7D'), 'default'],
  ];

  it.each(requests)('%s', async (_what, request, kind) => {
    const res = await request();
    const h = res.headers;
    const missing: string[] = [];
    const want = (name: string, test: (v: string) => boolean) => {
      const v = h[name];
      if (v === undefined || !test(String(v))) missing.push(`${name}=${String(v)}`);
    };
    want('x-content-type-options', (v) => v === 'nosniff');
    want('strict-transport-security', (v) => /max-age=(\d+)/.test(v) && Number(/max-age=(\d+)/.exec(v)![1]) >= 15_552_000);
    want('referrer-policy', (v) => v.length > 0);
    want('x-dns-prefetch-control', (v) => v === 'off');
    want('x-permitted-cross-domain-policies', (v) => v === 'none');
    want('cross-origin-opener-policy', (v) => v.length > 0);
    if (kind === 'default') {
      want('x-frame-options', (v) => /^(DENY|SAMEORIGIN)$/i.test(v));
      want('content-security-policy', (v) => /frame-ancestors '(self|none)'/.test(v));
    } else {
      // the hosted checkout may be framed by any origin (CONTRACT §7)
      want('content-security-policy', (v) => /frame-ancestors \*/.test(v));
      if (h['x-frame-options'] !== undefined) missing.push('x-frame-options must be absent on the framable checkout');
    }
    expect(missing, `${res.statusCode} ${String(h['content-type'])}`).toEqual([]);
  });
});

describe('CORS', () => {
  const evil = 'https://evil.example';

  it('closed on the merchant API: a preflight from another origin gets no access-control-allow-origin', async () => {
    for (const url of ['/v1/payments', '/v1/withdrawals', '/v1/payments/00000000-0000-4000-8000-000000000000', '/api/v1/addresses/validate']) {
      const res = await raw('OPTIONS', url, { origin: evil, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' });
      expect(res.headers['access-control-allow-origin'], `OPTIONS ${url} → ${res.statusCode}`).toBeUndefined();
      expect(res.headers['access-control-allow-headers'], url).toBeUndefined();
      expect(res.statusCode, url).toBeLessThan(500);
    }
  });

  it('closed on the merchant API: answers (and errors) to another origin carry no access-control-allow-origin', async () => {
    const path = '/v1/payments?limit=1';
    const ok = await logged.app.inject({ method: 'GET', url: path, headers: { origin: evil, authorization: authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'GET', path }) } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
    const refused = await raw('GET', path, { origin: evil });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(refused.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('open on /checkout/api/* (preflight and request) and on the widget script', async () => {
    const get = await raw('GET', `/checkout/api/get?input=${encodeURIComponent(JSON.stringify({ token: checkoutToken }))}`, { origin: evil });
    expect(get.statusCode, get.body).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('*');
    const preflight = await raw('OPTIONS', '/checkout/api/choose', { origin: evil, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' });
    expect(preflight.statusCode).toBeLessThan(300);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    // no credentials with a wildcard origin
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    const widget = await raw('GET', '/widget/crypto-checkout.js', { origin: evil });
    expect(widget.statusCode).toBe(200);
    expect(widget.headers['access-control-allow-origin']).toBe('*');
  });
});
