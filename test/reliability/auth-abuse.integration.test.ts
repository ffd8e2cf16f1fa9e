/**
 * Authentication abuse (issue 7.2): replays outside the clock window, a
 * signature carried to another path, revocation taking effect at once (also
 * on a second web process), and brute force stopped by the failure limits
 * per API key (its wrong signatures) and per client address (all its
 * requests) (429 + Retry-After).
 *
 * The limits are per process (server/platform/rate-limit.ts): with N web
 * processes a client gets at most N× the budget; the last test shows exactly
 * that, so the README's multi-instance statement is checked, not just written.
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type KassaServer } from '../../server/edges/app.js';
import { createApiKey } from '../../server/modules/businesses/business.service.js';
import { buildDeps } from '../../server/compose.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { postEntries } from '../../server/modules/ledger/ledger.service.js';
import type { Scope } from '../../server/modules/money/catalog.js';
import { startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { problemViolation } from './support.js';

const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

let t: TestApp;
let second: KassaServer | null = null;
let ipSeq = 0;
/** A fresh client address per call, so one test's failures do not block another's requests. */
const freshIp = () => `10.77.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;

type Who = { apiKey: string; apiSecret: string };
type Method = 'GET' | 'POST';

const nowS = () => Math.floor(t.clock.now().getTime() / 1000);

function send(
  app: TestApp['app'],
  method: Method,
  url: string,
  options: { body?: string; authorization?: string; ip?: string } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    payload: options.body,
    remoteAddress: options.ip ?? freshIp(),
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.authorization !== undefined ? { authorization: options.authorization } : {}),
    },
  });
}

const sign = (who: Who, method: Method, path: string, body = '', timestamp = nowS()) =>
  authorizationHeader(who.apiKey, who.apiSecret, { method, path, body, timestamp });

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(problemViolation(res), res.body).toBeNull();
  expect(res.json().code).toBe(code);
}

const paymentBody = (clientPaymentId = `abuse-${randomUUID()}`) =>
  JSON.stringify({ clientPaymentId, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '5.00' });

async function rowCount(table: 'payments' | 'withdrawals' | 'events'): Promise<number> {
  const [row] = await t.db.sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`);
  return row!.n;
}

const newKey = (scopes: readonly Scope[] = ['CREATE_PAYMENT', 'READ_PAYMENT', 'CREATE_WITHDRAWAL', 'READ_WITHDRAWAL']) =>
  createApiKey(t.db.db, t.deps.masterKey, t.business.businessId, scopes);

beforeAll(async () => {
  t = await startTestApp();
  await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '100000.00', kind: 'TEST' }], t.clock.now());
});
afterAll(async () => {
  await second?.stop();
  await t?.close();
});

describe('replays', () => {
  it('a request replayed byte for byte after the 300 s window is refused and changes nothing', async () => {
    const body = paymentBody();
    const authorization = sign(t.business, 'POST', '/v1/payments', body);
    const first = await send(t.app, 'POST', '/v1/payments', { body, authorization });
    expect(first.statusCode, first.body).toBe(200);
    const payments = await rowCount('payments');
    const events = await rowCount('events');

    t.clock.advance(301_000);
    try {
      expectProblem(await send(t.app, 'POST', '/v1/payments', { body, authorization }), 401, 'UNAUTHORIZED');
      const read = `/v1/payments/${first.json().paymentInfo.paymentId}`;
      const readAuth = sign(t.business, 'GET', read, '', nowS() - 301);
      expectProblem(await send(t.app, 'GET', read, { authorization: readAuth }), 401, 'UNAUTHORIZED');
      // a timestamp from the future is no better
      expectProblem(await send(t.app, 'GET', read, { authorization: sign(t.business, 'GET', read, '', nowS() + 301) }), 401, 'UNAUTHORIZED');
    } finally {
      t.clock.advance(-301_000);
    }
    expect(await rowCount('payments')).toBe(payments);
    expect(await rowCount('events')).toBe(events);
  });

  it('a replay inside the window is harmless for creations: idempotency returns the original, no second row', async () => {
    const body = paymentBody();
    const authorization = sign(t.business, 'POST', '/v1/payments', body);
    const first = await send(t.app, 'POST', '/v1/payments', { body, authorization });
    expect(first.statusCode, first.body).toBe(200);
    const payments = await rowCount('payments');
    const replays = await Promise.all(Array.from({ length: 5 }, () => send(t.app, 'POST', '/v1/payments', { body, authorization })));
    for (const r of replays) {
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().paymentInfo.paymentId).toBe(first.json().paymentInfo.paymentId);
    }
    expect(await rowCount('payments')).toBe(payments);

    const wBody = JSON.stringify({
      clientWithdrawalId: `abuse-w-${randomUUID()}`, businessId: t.business.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.001',
    });
    const wAuth = sign(t.business, 'POST', '/v1/withdrawals', wBody);
    const w1 = await send(t.app, 'POST', '/v1/withdrawals', { body: wBody, authorization: wAuth });
    expect(w1.statusCode, w1.body).toBe(200);
    const withdrawals = await rowCount('withdrawals');
    const w2 = await send(t.app, 'POST', '/v1/withdrawals', { body: wBody, authorization: wAuth });
    expect(w2.statusCode, w2.body).toBe(200);
    expect(w2.json().withdrawalId).toBe(w1.json().withdrawalId);
    expect(await rowCount('withdrawals')).toBe(withdrawals);
  });
});

describe('single-use requests (no idempotency key)', () => {
  it('a whitelisting replayed byte for byte inside the window is refused: a removed address is not put back', async () => {
    const key = await newKey(['MANAGE_WHITELIST']);
    const body = JSON.stringify({ currency: 'BTC', network: 'BTC', address: BTC, label: 'replayed' });
    const captured = sign(key, 'POST', '/v1/whitelisted-addresses', body);
    const added = await send(t.app, 'POST', '/v1/whitelisted-addresses', { body, authorization: captured });
    expect(added.statusCode, added.body).toBe(200);
    const removedPath = `/v1/whitelisted-addresses/${added.json().id}`;
    const removeAuth = authorizationHeader(key.apiKey, key.apiSecret, { method: 'DELETE', path: removedPath, timestamp: nowS() });
    const removed = await t.app.inject({ method: 'DELETE', url: removedPath, headers: { authorization: removeAuth }, remoteAddress: freshIp() });
    expect(removed.statusCode, removed.body).toBe(200);
    // the captured request again, 10 s later, well inside the 300 s window
    t.clock.advance(10_000);
    try {
      const replay = await send(t.app, 'POST', '/v1/whitelisted-addresses', { body, authorization: captured });
      expectProblem(replay, 409, 'REQUEST_ALREADY_USED');
      expect(replay.json().detail).toContain('already received (carried out or refused)');
      const [row] = await t.db.sql`select count(*)::int as n from whitelisted_addresses where business_id = ${t.business.businessId} and label = 'replayed'`;
      expect(row!.n).toBe(0);
      // the removal replayed is refused the same way; a newly signed request is served
      expectProblem(await t.app.inject({ method: 'DELETE', url: removedPath, headers: { authorization: removeAuth }, remoteAddress: freshIp() }), 409, 'REQUEST_ALREADY_USED');
      const fresh = await send(t.app, 'POST', '/v1/whitelisted-addresses', { body, authorization: sign(key, 'POST', '/v1/whitelisted-addresses', body) });
      expect(fresh.statusCode, fresh.body).toBe(200);
      // A request the operation refuses (422: already whitelisted) changes no entry but stays used: captured
      // and replayed after the merchant removed the address, it would otherwise put it back (found by a review).
      const refusedAuth = sign(key, 'POST', '/v1/whitelisted-addresses', body, nowS() + 1);
      expectProblem(await send(t.app, 'POST', '/v1/whitelisted-addresses', { body, authorization: refusedAuth }), 422, 'ALREADY_WHITELISTED');
      const removeFresh = `/v1/whitelisted-addresses/${fresh.json().id}`;
      const removal = authorizationHeader(key.apiKey, key.apiSecret, { method: 'DELETE', path: removeFresh, timestamp: nowS() });
      expect((await t.app.inject({ method: 'DELETE', url: removeFresh, headers: { authorization: removal }, remoteAddress: freshIp() })).statusCode).toBe(200);
      expectProblem(await send(t.app, 'POST', '/v1/whitelisted-addresses', { body, authorization: refusedAuth }), 409, 'REQUEST_ALREADY_USED');
      const [after] = await t.db.sql`select count(*)::int as n from whitelisted_addresses where business_id = ${t.business.businessId} and label = 'replayed'`;
      expect(after!.n).toBe(0);
    } finally {
      t.clock.advance(-10_000);
    }
  });
});

describe('a signature is bound to its method, path and query', () => {
  it('a signature for one path is refused on another (and the other path creates nothing)', async () => {
    const body = paymentBody();
    const ok = await send(t.app, 'POST', '/v1/payments', { body, authorization: sign(t.business, 'POST', '/v1/payments', body) });
    expect(ok.statusCode, ok.body).toBe(200);
    const paymentId = ok.json().paymentInfo.paymentId as string;

    const cases: [Method, string, string, string][] = [
      // [method, signed for, sent to, body]
      ['GET', `/v1/payments/${paymentId}`, `/v1/withdrawals/${paymentId}`, ''],
      ['GET', '/v1/payments?limit=1', '/v1/payments?limit=1&status=NEW', ''],
      ['GET', '/v1/payments', '/v1/withdrawals', ''],
      ['GET', '/v1/currencies', '/v1/rates?from=BTC&to=EUR', ''],
      ['GET', `/v1/payments/${paymentId}`, `/v1/payments/${paymentId.toUpperCase()}`, ''],
      ['GET', '/v1/payments', '/v1/payments/', ''],
      ['POST', '/v1/payments', '/v1/withdrawals', paymentBody()],
      ['POST', '/v1/payments', '/api/v1/addresses/validate', JSON.stringify({ currency: 'BTC', network: 'BTC', address: BTC })],
      ['POST', `/v1/test-helpers/payments/${paymentId}/deposits`, `/v1/test-helpers/payments/${randomUUID()}/deposits`, JSON.stringify({ depositCurrency: 'BTC', network: 'BTC', amount: '0.001' })],
    ];
    const before = { payments: await rowCount('payments'), withdrawals: await rowCount('withdrawals') };
    for (const [method, signedFor, sentTo, b] of cases) {
      const authorization = sign(t.business, method, signedFor, b);
      const res = await send(t.app, method, sentTo, { body: b || undefined, authorization });
      // 401 where the route exists; an unknown route may answer 404 first. Never a success.
      expect([401, 404], `${method} ${signedFor} → ${sentTo}: ${res.body}`).toContain(res.statusCode);
      expect(problemViolation(res)).toBeNull();
      // control: the same signature works where it was made for
      if (!signedFor.includes('test-helpers') && method === 'GET') {
        expect((await send(t.app, method, signedFor, { authorization })).statusCode).toBe(200);
      }
    }
    expect({ payments: await rowCount('payments'), withdrawals: await rowCount('withdrawals') }).toEqual(before);
  });
});

describe('revocation', () => {
  it('a revoked key is refused at once, on this web process and on another one, even mid-burst', async () => {
    // A second web process on the same database: no cache of keys may keep a revoked one alive.
    const deps2 = buildDeps(testConfig(), t.db, t.deps.masterKey, t.clock.now);
    second = await createServer({ deps: deps2, logger: false });
    await second.app.ready();

    const key = await newKey();
    const list = '/v1/payments?limit=1';
    const body0 = paymentBody();
    const created = await send(t.app, 'POST', '/v1/payments', { body: body0, authorization: sign(key, 'POST', '/v1/payments', body0) });
    expect(created.statusCode, created.body).toBe(200);
    // Reading one payment confirms the process's cached key in its own statement; listing reads the key row.
    const one = `/v1/payments/${created.json().paymentInfo.paymentId}`;
    const pathOf = (i: number) => (i % 4 < 2 ? list : one);
    for (const app of [t.app, second.app]) {
      for (const path of [list, one]) expect((await send(app, 'GET', path, { authorization: sign(key, 'GET', path) })).statusCode).toBe(200);
    }
    const path = list;

    // A burst in flight while the key is revoked: every request that starts after the revocation committed is refused.
    let revokedAt = Infinity;
    const results: { started: number; status: number }[] = [];
    const burst = (async () => {
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        const app = i % 2 ? t.app : second!.app;
        const res = await send(app, 'GET', pathOf(i), { authorization: sign(key, 'GET', pathOf(i)) });
        results.push({ started, status: res.statusCode });
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    await t.db.sql`update api_keys set revoked_at = now() where key = ${key.apiKey}`;
    revokedAt = performance.now();
    await burst;
    const after = results.filter((r) => r.started > revokedAt);
    expect(after.length).toBeGreaterThan(0);
    // 401, or 429 once a process has counted 20 failures on the key: never an answer
    expect(after.filter((r) => r.status !== 401 && r.status !== 429)).toEqual([]);
    expect(after[0]!.status).toBe(401);
    const before = await rowCount('payments');
    for (const app of [t.app, second.app]) {
      const body = paymentBody();
      const res = await send(app, 'POST', '/v1/payments', { body, authorization: sign(key, 'POST', '/v1/payments', body) });
      expect([401, 429], res.body).toContain(res.statusCode);
      expect(problemViolation(res)).toBeNull();
    }
    expect(await rowCount('payments')).toBe(before);
    // the business's other key is untouched
    expect((await send(t.app, 'GET', path, { authorization: sign(t.business, 'GET', path) })).statusCode).toBe(200);
  });
});

describe('brute force is rate limited (429 + Retry-After)', () => {
  const LIST = '/v1/payments?limit=1';

  function expectLimited(res: LightMyRequestResponse) {
    expectProblem(res, 429, 'RATE_LIMITED');
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter), String(res.headers['retry-after'])).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  }

  it('per key: after 20 bad signatures on one key (from 20 addresses) its wrong signatures are refused, but not its owner', async () => {
    const target = await newKey();
    const bystander = await newKey();
    for (let i = 0; i < 20; i++) {
      const forged = sign({ apiKey: target.apiKey, apiSecret: `ks_guess_${i}` }, 'GET', LIST);
      expectProblem(await send(t.app, 'GET', LIST, { authorization: forged }), 401, 'UNAUTHORIZED');
    }
    // the 21st guess is refused before its answer could tell anything…
    const guess = await send(t.app, 'GET', LIST, { authorization: sign({ apiKey: target.apiKey, apiSecret: 'ks_guess_21' }, 'GET', LIST) });
    expectLimited(guess);
    // …and the 429 does not say whether the key exists
    expect(guess.body).not.toContain(target.apiKey);
    // The key's id is in every Authorization header and payment record: whoever saw it could otherwise
    // lock its owner out with 20 wrong signatures a minute. Correctly signed requests still pass.
    const owner = await send(t.app, 'GET', LIST, { authorization: sign(target, 'GET', LIST) });
    expect(owner.statusCode, owner.body).toBe(200);
    expect((await send(t.app, 'GET', LIST, { authorization: sign(bystander, 'GET', LIST) })).statusCode).toBe(200);
  });

  it('per address: after 60 failures from one address (any keys) it is refused, even with a valid request; other addresses are not', async () => {
    const attacker = '10.66.6.6';
    for (let i = 0; i < 60; i++) {
      const unknown = sign({ apiKey: `kk_nope_${i}`, apiSecret: 'ks_x' }, 'GET', LIST);
      const res = await send(t.app, 'GET', LIST, { authorization: unknown, ip: attacker });
      expectProblem(res, 401, 'UNAUTHORIZED');
    }
    expectLimited(await send(t.app, 'GET', LIST, { authorization: sign({ apiKey: 'kk_nope_61', apiSecret: 'ks_x' }, 'GET', LIST), ip: attacker }));
    // no header at all counts too, and is refused as well now
    expectLimited(await send(t.app, 'GET', LIST, { ip: attacker }));
    expectLimited(await send(t.app, 'GET', LIST, { authorization: sign(t.business, 'GET', LIST), ip: attacker }));
    const body = paymentBody();
    const before = await rowCount('payments');
    expectLimited(await send(t.app, 'POST', '/v1/payments', { body, authorization: sign(t.business, 'POST', '/v1/payments', body), ip: attacker }));
    expect(await rowCount('payments')).toBe(before);
    expect((await send(t.app, 'GET', LIST, { authorization: sign(t.business, 'GET', LIST), ip: '10.66.6.7' })).statusCode).toBe(200);
  });

  it('successes are not counted: 80 valid requests from one address and key are all answered', async () => {
    const ip = '10.55.5.5';
    const key = await newKey();
    for (let i = 0; i < 80; i++) {
      const res = await send(t.app, 'GET', LIST, { authorization: sign(key, 'GET', LIST), ip });
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('multi-instance: each web process keeps its own budget, so N processes allow at most N × 20 guesses per key', async () => {
    const s2 = second ?? (await createServer({ deps: buildDeps(testConfig(), t.db, t.deps.masterKey, t.clock.now), logger: false }));
    second = s2;
    await s2.app.ready();
    const target = await newKey();
    let answered401 = 0;
    // 50 guesses alternating between the two processes: 20 on each get a 401, then both answer 429.
    for (let i = 0; i < 50; i++) {
      const app = i % 2 ? t.app : s2.app;
      const res = await send(app, 'GET', LIST, { authorization: sign({ apiKey: target.apiKey, apiSecret: `ks_guess_${i}` }, 'GET', LIST) });
      if (res.statusCode === 401) answered401++;
      else expectLimited(res);
    }
    expect(answered401).toBe(40);
  });
});

describe('behind a reverse proxy (KASSA_TRUST_PROXY)', () => {
  const LIST = '/v1/payments?limit=1';
  const viaProxy = (app: TestApp['app'], client: string, authorization?: string, proxy = '127.0.0.1') =>
    app.inject({ method: 'GET', url: LIST, remoteAddress: proxy, headers: { 'x-forwarded-for': client, ...(authorization ? { authorization } : {}) } });

  it('counts failures by the client the named proxy forwards for, not by the proxy; a client elsewhere keeps its access', async () => {
    const proxied = await createServer({ deps: buildDeps(testConfig({ KASSA_TRUST_PROXY: '127.0.0.1' }), t.db, t.deps.masterKey, t.clock.now), logger: false });
    await proxied.app.ready();
    try {
      for (let i = 0; i < 60; i++) {
        expect((await viaProxy(proxied.app, '203.0.113.9', sign({ apiKey: `kk_nope_${i}`, apiSecret: 'ks_x' }, 'GET', LIST))).statusCode).toBe(401);
      }
      // the guesser is locked out, correctly signed or not…
      expect((await viaProxy(proxied.app, '203.0.113.9', sign(t.business, 'GET', LIST))).statusCode).toBe(429);
      // …while another customer behind the same proxy is not (without the setting, both were "127.0.0.1")
      expect((await viaProxy(proxied.app, '203.0.113.10', sign(t.business, 'GET', LIST))).statusCode).toBe(200);
      // a client that is not the named proxy cannot pick its address with the header
      const direct = await viaProxy(proxied.app, '203.0.113.9', sign(t.business, 'GET', LIST), '198.51.100.7');
      expect(direct.statusCode, direct.body).toBe(200);
      // /metrics' loopback rule sees the forwarded client too: a public client via a local proxy is refused
      const metrics = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.10' } });
      expect(metrics.statusCode).toBe(403);
      expect(metrics.json().code).toBe('METRICS_LOOPBACK_ONLY');
    } finally {
      await proxied.stop();
    }
  });
});
