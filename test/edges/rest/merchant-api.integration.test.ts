/**
 * What a merchant reaches for on day two (issue 17), through the real server:
 * balances equal to the ledger after real (sandbox) deposits and withdrawals,
 * unknown fields refused by name, minimum amounts, auth errors that explain
 * themselves, the trailing-slash 404, the favicon, and tRPC times in the REST
 * format. Every 200 answer here is also checked against its route's schema
 * (startTestApp turns checkResponses on).
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sumEntries } from '../../../server/modules/ledger/index.js';
import { Dec, DEPOSIT_MIN_AMOUNTS } from '../../../server/modules/money/index.js';
import { BalancesResponseSchema } from '../../../server/modules/withdrawals/index.js';
import { authorizationHeader, sign } from '../../../server/edges/rest/signature.rules.js';
import { createApiKey, createOperator } from '../../../server/modules/businesses/business.service.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { createContextInner } from '../../../server/edges/trpc/context.js';
import { appRouter } from '../../../server/edges/trpc/app-router.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';

let t: TestApp;
let worker: Runner | null;
beforeAll(async () => {
  // Deposits confirm at once (the worker runs the confirmation job).
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0' } });
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker?.stop();
  await t.close();
});

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as { code: string; detail: string; errors: { field: string; message: string }[] };
  expect(body.code, res.body).toBe(code);
  return body;
}

const nowS = () => Math.floor(t.clock.now().getTime() / 1000);

// ---------------------------------------------------------------------------

describe('GET /v1/balances equals the ledger', () => {
  let shop: TestBusiness;
  const balances = async () => BalancesResponseSchema.parse((await t.signed('GET', '/v1/balances', undefined, shop)).json()).balances;
  /** The ledger's own numbers: MERCHANT entries summed, and what in-flight withdrawals took. */
  const ledger = async (currency: string) => {
    const sum = (await sumEntries(t.db.db, shop.businessId)).find((e) => e.account === 'MERCHANT' && e.currency === currency);
    const [inFlight] = await t.db.sql<{ amount: string | null }[]>`
      select sum(deducted_settlement_amount)::text as amount from withdrawals
      where business_id = ${shop.businessId} and settlement_currency = ${currency} and status in ('PENDING_APPROVAL', 'PROCESSING')`;
    return { available: new Dec(sum?.amount ?? 0), pending: new Dec(inFlight!.amount ?? 0) };
  };
  const expectEqualsLedger = async (expected: { available: string; pending: string }) => {
    const [eur] = (await balances()).filter((b) => b.currency === 'EUR');
    expect(eur).toEqual({ currency: 'EUR', ...expected });
    const l = await ledger('EUR');
    expect(new Dec(eur!.available).eq(l.available), `available ${eur!.available} vs ledger ${l.available}`).toBe(true);
    expect(new Dec(eur!.pending).eq(l.pending), `pending ${eur!.pending} vs ledger ${l.pending}`).toBe(true);
  };
  const withdraw = async (clientWithdrawalId: string) => {
    const res = await t.signed(
      'POST',
      '/v1/withdrawals',
      { clientWithdrawalId, businessId: shop.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amount: '0.001' },
      shop,
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { withdrawalId: string; deductedSettlementAmount: string };
  };
  const outcome = (withdrawalId: string, status: string) =>
    t.signed('POST', `/v1/test-helpers/withdrawals/${withdrawalId}/outcome`, { status }, shop);

  beforeAll(async () => {
    shop = await t.addBusiness({ name: 'Balances shop' });
  });

  it('a new business: its settlement currency at zero', async () => {
    expect(await balances()).toEqual([{ currency: 'EUR', available: '0.00', pending: '0.00' }]);
  });

  it('after a confirmed deposit, a withdrawal in flight, a FAILED one and a COMPLETED one', async () => {
    const created = await t.signed(
      'POST',
      '/v1/payments',
      { clientPaymentId: `bal-${randomUUID()}`, businessId: shop.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' },
      shop,
    );
    const paymentId = created.json().paymentInfo.paymentId as string;
    expect((await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01' }, shop)).statusCode).toBe(200);
    await eventually(async () => (await t.signed('GET', `/v1/payments/${paymentId}`, undefined, shop)).json().status === 'DEPOSITED', 10_000, 'DEPOSITED');
    // 0.01 BTC × 60000 EUR = 600.00, minus the 1 % service fee: 594.00 credited.
    await expectEqualsLedger({ available: '594.00', pending: '0.00' });
    // From here withdrawals stay in flight until their outcome is forced: no worker to broadcast them.
    await worker!.stop();
    worker = null;

    // 0.001 BTC + 0.00002 fee = 0.00102 × 60000 = 61.20 EUR moves from available to pending.
    const first = await withdraw(`w-${randomUUID()}`);
    expect(first.deductedSettlementAmount).toBe('61.20');
    await expectEqualsLedger({ available: '532.80', pending: '61.20' });

    expect((await outcome(first.withdrawalId, 'FAILED')).statusCode).toBe(200);
    await expectEqualsLedger({ available: '594.00', pending: '0.00' });

    const second = await withdraw(`w-${randomUUID()}`);
    await expectEqualsLedger({ available: '532.80', pending: '61.20' });
    expect((await outcome(second.withdrawalId, 'COMPLETED')).statusCode).toBe(200);
    await expectEqualsLedger({ available: '532.80', pending: '0.00' });
  });

  it('needs READ_WITHDRAWAL', async () => {
    const key = await createApiKey(t.db.db, t.deps.masterKey, shop.businessId, ['CREATE_PAYMENT']);
    expectProblem(await t.signed('GET', '/v1/balances', undefined, key), 403, 'FORBIDDEN_SCOPE');
  });

  it('the operators’ tRPC answers the same', async () => {
    const op = await createOperator(t.db.db, `op-${randomUUID()}`, 'viewer');
    const caller = createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: op.operatorId, name: 'viewer', role: 'viewer' } }));
    expect(await caller.balances.get({ businessId: shop.businessId })).toEqual((await t.signed('GET', '/v1/balances', undefined, shop)).json());
  });
});

describe('unknown fields are refused by name (400 VALIDATION_FAILED)', () => {
  const payment = () => ({ clientPaymentId: `u-${randomUUID()}`, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR' });

  it('a misspelt displayAmount: 400 naming displayAmmount, and no payment', async () => {
    const body = { ...payment(), displayAmmount: '10.00' };
    const p = expectProblem(await t.signed('POST', '/v1/payments', body), 400, 'VALIDATION_FAILED');
    expect(p.errors).toContainEqual({ field: 'displayAmmount', message: expect.stringContaining('unknown field') });
    const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from payments where client_payment_id = ${body.clientPaymentId}`;
    expect(row!.n).toBe(0);
  });

  it('one entry per unknown field, each named', async () => {
    const p = expectProblem(await t.signed('POST', '/v1/payments', { ...payment(), displayAmount: '10.00', foo: 1, bar: { x: 1 } }), 400, 'VALIDATION_FAILED');
    expect(p.errors.map((e) => e.field).sort()).toEqual(['bar', 'foo']);
  });

  it.each([
    ['POST', '/v1/withdrawals', { clientWithdrawalId: 'x', businessId: 'not-checked-before-the-shape', withdrawCurrency: 'BTC', network: 'BTC', address: 'a', amount: '1', memo: 'x' }, 'memo'],
    ['POST', '/v1/whitelisted-addresses', { currency: 'BTC', network: 'BTC', address: 'a', tag: '1' }, 'tag'],
    ['POST', '/api/v1/addresses/validate', { currency: 'BTC', network: 'BTC', address: 'a', chain: 'x' }, 'chain'],
  ] as const)('%s %s: %s', async (method, path, body, field) => {
    const p = expectProblem(await t.signed(method, path, body), 400, 'VALIDATION_FAILED');
    expect(p.errors.map((e) => e.field)).toContain(field);
  });

  it.each([
    ['/v1/payments?limit=5&statuss=NEW', 'statuss'],
    ['/v1/withdrawals?cursr=abc', 'cursr'],
    ['/v1/balances?currency=EUR', 'currency'],
    ['/v1/currencies?network=BTC', 'network'],
    ['/v1/rates?from=BTC&to=EUR&at=1', 'at'],
  ])('query %s → names %s', async (path, field) => {
    const p = expectProblem(await t.signed('GET', path), 400, 'VALIDATION_FAILED');
    expect(p.errors).toEqual([{ field, message: expect.stringContaining('unknown field') }]);
  });

  it('tRPC inputs too: an unknown key is BAD_REQUEST naming it', async () => {
    const op = await createOperator(t.db.db, `op-${randomUUID()}`, 'admin');
    const caller = createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: op.operatorId, name: 'admin', role: 'admin' } }));
    const error = await caller.businesses.update({ businessId: t.business.businessId, requireWhitelst: true } as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(String((error as Error).message)).toContain('requireWhitelst');
  });
});

describe('minimum amounts (CONTRACT §4 minAmount, 422 AMOUNT_BELOW_MINIMUM)', () => {
  const crypto = (depositCurrency: string, network: string, depositAmount: string) =>
    t.signed('POST', '/v1/payments', { clientPaymentId: `m-${randomUUID()}`, businessId: t.business.businessId, locale: 'en', depositCurrency, network, depositAmount });

  it('GET /v1/currencies exposes minAmount for every deposit pair, the catalog’s value', async () => {
    const doc = (await t.signed('GET', '/v1/currencies')).json() as { currencies: { code: string; networks: { network: string; deposit: boolean; minAmount: string | null }[] }[] };
    let pairs = 0;
    for (const c of doc.currencies) {
      for (const n of c.networks.filter((x) => x.deposit)) {
        expect(n.minAmount, `${c.code}/${n.network}`).toBe(DEPOSIT_MIN_AMOUNTS[c.code as 'BTC'][n.network as 'BTC']);
        pairs++;
      }
    }
    expect(pairs).toBe(18);
  });

  it.each([
    ['BTC', 'BTC', '0.00009999', '0.0001'],
    ['USDT', 'TRX', '4.99', '5'],
    ['XRP', 'XRP', '1.999999', '2'],
    ['USDC', 'ETH', '9.999999', '10'],
  ])('%s on %s: %s → 422 naming depositAmount, %s → 200', async (currency, network, below, atMin) => {
    const p = expectProblem(await crypto(currency, network, below), 422, 'AMOUNT_BELOW_MINIMUM');
    expect(p.errors).toEqual([{ field: 'depositAmount', message: expect.stringContaining(`minimum of ${atMin} ${currency} on ${network}`) }]);
    expect((await crypto(currency, network, atMin)).statusCode).toBe(200);
  });

  it('a fiat payment: choosing a currency whose amount due is below its minimum is 422; a cheaper network is fine', async () => {
    // 2.00 EUR is about 2.2 USDT: below the 10 USDT minimum on ETH, above the 1 USDT minimum on BSC.
    const created = await t.signed('POST', '/v1/payments', { clientPaymentId: `f-${randomUUID()}`, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '2.00' });
    const paymentId = created.json().paymentInfo.paymentId as string;
    const op = await createOperator(t.db.db, `op-${randomUUID()}`, 'admin');
    const caller = createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: op.operatorId, name: 'admin', role: 'admin' } }));
    const error = await caller.payments.chooseCurrency({ paymentId, depositCurrency: 'USDT', network: 'ETH' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', cause: { code: 'AMOUNT_BELOW_MINIMUM' } });
    expect((await t.signed('GET', `/v1/payments/${paymentId}`)).json().status).toBe('NEW');
    const chosen = await caller.payments.chooseCurrency({ paymentId, depositCurrency: 'USDT', network: 'BSC' });
    expect(chosen.status).toBe('PENDING');
  });
});

describe('authentication errors that help', () => {
  const PATH = '/v1/balances';
  const send = (authorization: string, ip?: string) =>
    t.app.inject({ method: 'GET', url: PATH, headers: { authorization }, ...(ip ? { remoteAddress: ip } : {}) });

  it('a millisecond timestamp is named as such, with the value in seconds', async () => {
    const ms = t.clock.now().getTime();
    const signature = sign(t.business.apiSecret, String(ms), 'GET', PATH, '');
    const p = expectProblem(await send(`KASSA-API api-key=${t.business.apiKey},signature=${signature},timestamp=${ms}`), 401, 'UNAUTHORIZED');
    expect(p.detail).toContain('milliseconds');
    expect(p.detail).toContain(String(Math.floor(ms / 1000)));
  });

  it('a timestamp too far off says how far and the server time', async () => {
    const p = expectProblem(await send(authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'GET', path: PATH, timestamp: nowS() - 900 })), 401, 'UNAUTHORIZED');
    expect(p.detail).toContain('900 s away');
    expect(p.detail).toContain(String(nowS()));
  });

  it('a wrong signature shows the string the server verified, never the secret or the expected signature', async () => {
    const ts = nowS();
    const wrong = authorizationHeader(t.business.apiKey, 'not-the-secret', { method: 'GET', path: PATH, timestamp: ts });
    const p = expectProblem(await send(wrong), 401, 'UNAUTHORIZED');
    expect(p.detail).toContain(JSON.stringify(`${ts}\nGET\n${PATH}\n`));
    const expected = sign(t.business.apiSecret, String(ts), 'GET', PATH, '');
    expect(p.detail).not.toContain(expected);
    expect(p.detail).not.toContain(t.business.apiSecret);
    // An unknown key gets the very same words: no oracle for which keys exist.
    const unknown = authorizationHeader('kk_unknown_key', 'not-the-secret', { method: 'GET', path: PATH, timestamp: ts });
    expect(expectProblem(await send(unknown), 401, 'UNAUTHORIZED').detail).toBe(p.detail);
  });

  it('a POST body is described by its length, not echoed', async () => {
    const body = JSON.stringify({ clientPaymentId: 'secret-order', businessId: t.business.businessId });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: body,
      headers: { 'content-type': 'application/json', authorization: authorizationHeader(t.business.apiKey, 'wrong', { method: 'POST', path: '/v1/payments', body, timestamp: nowS() }) },
    });
    const p = expectProblem(res, 401, 'UNAUTHORIZED');
    expect(p.detail).toContain(`${Buffer.byteLength(body)} bytes`);
    expect(p.detail).not.toContain('secret-order');
  });

  it('a base64 signature is told to be lowercase hex', async () => {
    const hex = sign(t.business.apiSecret, String(nowS()), 'GET', PATH, '');
    const b64 = Buffer.from(hex, 'hex').toString('base64');
    const p = expectProblem(await send(`KASSA-API api-key=${t.business.apiKey},signature=${b64},timestamp=${nowS()}`), 401, 'UNAUTHORIZED');
    expect(p.detail).toContain('64 lowercase hex');
  });

  it('the lockout: 20 bad signatures on a key → 429 with Retry-After and the documented numbers', async () => {
    const victim = await t.addBusiness({ name: 'Lockout shop' });
    for (let i = 0; i < 20; i++) {
      expectProblem(await send(authorizationHeader(victim.apiKey, `guess-${i}`, { method: 'GET', path: PATH, timestamp: nowS() }), `10.9.0.${i + 1}`), 401, 'UNAUTHORIZED');
    }
    const res = await send(authorizationHeader(victim.apiKey, 'guess-21', { method: 'GET', path: PATH, timestamp: nowS() }), '10.9.1.1');
    const p = expectProblem(res, 429, 'RATE_LIMITED');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(p.detail).toContain('20 failed authentications for this API key within 60 s lock out its wrong signatures');
    // The key's owner is not locked out by whoever guessed: a correctly signed request passes.
    expect((await send(authorizationHeader(victim.apiKey, victim.apiSecret, { method: 'GET', path: PATH, timestamp: nowS() }), '10.9.1.2')).statusCode).toBe(200);
  });
});

describe('paths, favicon and time formats', () => {
  it.each([
    ['/v1/payments/', 'paymentId', '/v1/payments'],
    ['/v1/withdrawals/', 'withdrawalId', '/v1/withdrawals'],
  ])('GET %s is a 404 that names the missing %s and the list route', async (path, param, list) => {
    const p = expectProblem(await t.signed('GET', path), 404, 'NOT_FOUND');
    expect(p.detail).toContain(param);
    expect(p.detail).toContain(`${list} to list`);
    expect(p.detail).not.toMatch(/ {2}/);
  });

  it('GET /favicon.svg is an SVG image', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml');
    expect(res.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  it('tRPC answers times as REST does: integer UNIX seconds', async () => {
    const op = await createOperator(t.db.db, `op-${randomUUID()}`, 'admin');
    const caller = createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: op.operatorId, name: 'admin', role: 'admin' } }));
    const [key] = await caller.apiKeys.list({ businessId: t.business.businessId });
    expect(Number.isInteger(key!.createdAt)).toBe(true);
    const [row] = await t.db.sql<{ s: number }[]>`select floor(extract(epoch from created_at))::int as s from api_keys where key = ${key!.apiKey}`;
    expect(key!.createdAt).toBe(row!.s);
    const business = await caller.businesses.get({ businessId: t.business.businessId });
    expect(Number.isInteger(business.createdAt)).toBe(true);
  });
});
