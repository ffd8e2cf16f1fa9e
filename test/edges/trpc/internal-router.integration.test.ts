/**
 * The internal tRPC router (CONTRACT §8) over real HTTP with @trpc/client:
 * operator bearer tokens, admin/viewer roles, business settings that later
 * REST payments use, and payments seen the same way as through REST.
 */
import { TRPCError } from '@trpc/server';
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../../server/modules/businesses/business.service.js';
import { appRouter, type AppRouter } from '../../../server/edges/trpc/app-router.js';
import { createContextInner } from '../../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';

let t: TestApp;
let address: string;
let admin: { operatorId: string; token: string };
let viewer: { operatorId: string; token: string };

function client(token?: string): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${address}/trpc`,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      }),
    ],
  });
}

/** The tRPC error a call fails with; fails the test when the call succeeds. */
async function trpcError(call: Promise<unknown>): Promise<{ code: string; httpStatus: number; message: string }> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCClientError);
    const e = error as TRPCClientError<AppRouter>;
    return { code: String(e.data?.code), httpStatus: Number(e.data?.httpStatus), message: e.message };
  }
  throw new Error('expected the call to fail');
}

let counter = 0;
const fiatBody = (business: TestBusiness, overrides: Record<string, unknown> = {}) => ({
  clientPaymentId: `trpc-${++counter}-${Math.random().toString(36).slice(2)}`,
  businessId: business.businessId,
  locale: 'en',
  displayCurrency: 'EUR',
  displayAmount: '100.00',
  ...overrides,
});

beforeAll(async () => {
  t = await startTestApp();
  address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  admin = await createOperator(t.db.db, 'ann', 'admin');
  viewer = await createOperator(t.db.db, 'vic', 'viewer');
});
afterAll(async () => t?.close());

describe('authentication and roles', () => {
  it('refuses calls without a bearer token: UNAUTHORIZED', async () => {
    const e = await trpcError(client().businesses.get.query({ businessId: t.business.businessId }));
    expect(e.code).toBe('UNAUTHORIZED');
    expect(e.httpStatus).toBe(401);
    const list = await trpcError(client().payments.list.query({}));
    expect(list.code).toBe('UNAUTHORIZED');
  });

  it('refuses an unknown or malformed token: UNAUTHORIZED', async () => {
    expect((await trpcError(client('kop_not-a-real-token').businesses.get.query({ businessId: t.business.businessId }))).code)
      .toBe('UNAUTHORIZED');
    expect((await trpcError(client('').payments.list.query({}))).code).toBe('UNAUTHORIZED');
    // A merchant API secret is not an operator token.
    expect((await trpcError(client(t.business.apiSecret).payments.list.query({}))).code).toBe('UNAUTHORIZED');
  });

  it('a viewer can read businesses and payments', async () => {
    const v = client(viewer.token);
    const business = await v.businesses.get.query({ businessId: t.business.businessId });
    expect(business.id).toBe(t.business.businessId);
    expect(business.name).toBe('Test shop');
    expect(business.settlementCurrency).toBe('EUR');
    // The encrypted callback secret is never shown to operators.
    expect(business).not.toHaveProperty('callbackSecretEnc');
    expect(JSON.stringify(business)).not.toContain(t.business.callbackSecret);
    const page = await v.payments.list.query({});
    expect(Array.isArray(page.items)).toBe(true);
    expect(page).toHaveProperty('nextCursor');
  });

  it('a viewer cannot update a business: FORBIDDEN, and nothing changes', async () => {
    const v = client(viewer.token);
    const e = await trpcError(v.businesses.update.mutate({ businessId: t.business.businessId, serviceFeePercent: '5' }));
    expect(e.code).toBe('FORBIDDEN');
    expect(e.httpStatus).toBe(403);
    const business = await v.businesses.get.query({ businessId: t.business.businessId });
    expect(business.serviceFeePercent).not.toBe('5');
  });

  it('an unknown business is NOT_FOUND', async () => {
    const a = client(admin.token);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await trpcError(a.businesses.get.query({ businessId: missing }))).code).toBe('NOT_FOUND');
    expect((await trpcError(a.businesses.update.mutate({ businessId: missing, name: 'x' }))).code).toBe('NOT_FOUND');
    expect((await trpcError(a.payments.get.query({ paymentId: missing }))).code).toBe('NOT_FOUND');
  });
});

describe('methods', () => {
  it.each(['OPTIONS', 'PUT', 'DELETE'] as const)('%s /trpc/… is 405 with Allow, as problem+json (tRPC answered 415 in text/plain)', async (method) => {
    const res = await t.app.inject({ method, url: '/trpc/payments.list', headers: { authorization: `Bearer ${admin.token}`, origin: 'https://elsewhere.example' } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED', detail: `${method} is not allowed on /trpc/payments.list; use GET, HEAD, POST.` });
  });

  it('the public checkout API still answers a CORS preflight', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/checkout/api/get', headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' } });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const put = await t.app.inject({ method: 'PUT', url: '/checkout/api/get' });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
  });
});

describe('businesses.update', () => {
  it('sets fees and callback URL; a later REST payment uses the new fee', async () => {
    const shop = await t.addBusiness({ name: 'Fee shop' });
    const a = client(admin.token);
    const updated = await a.businesses.update.mutate({
      businessId: shop.businessId,
      serviceFeePercent: '2',
      userFeeSharePercent: '50',
      paymentCallbackUrl: 'https://shop.example/kassa/payments',
    });
    expect(updated.id).toBe(shop.businessId);
    expect(Number(updated.serviceFeePercent)).toBe(2);
    expect(Number(updated.userFeeSharePercent)).toBe(50);
    expect(updated.paymentCallbackUrl).toBe('https://shop.example/kassa/payments');
    expect(updated).not.toHaveProperty('callbackSecretEnc');

    // Visible to a viewer afterwards.
    const read = await client(viewer.token).businesses.get.query({ businessId: shop.businessId });
    expect(Number(read.serviceFeePercent)).toBe(2);
    expect(Number(read.userFeeSharePercent)).toBe(50);
    expect(read.paymentCallbackUrl).toBe('https://shop.example/kassa/payments');

    // F=2, U=50: on EUR 100.00 the user pays 100·2/100·50/100 = 1.00 on top; uniform (100 + 1) × 1 = 101.00
    const res = await t.signed('POST', '/v1/payments', fiatBody(shop), shop);
    expect(res.statusCode).toBe(200);
    const p = res.json().paymentInfo;
    expect(p.expectedDisplayAmount).toBe('100.00');
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('1.00');
    expect(p.expectedUniformAmount).toBe('101.00');
    expect(p.userServiceFeeDistributionPercentage).toBe('50');
  });

  it('a crypto payment after the update carries the user fee in the deposit currency', async () => {
    const shop = await t.addBusiness({ name: 'Crypto fee shop' });
    await client(admin.token).businesses.update.mutate({ businessId: shop.businessId, serviceFeePercent: '2', userFeeSharePercent: '50' });
    // BTC 0.01: fee = 0.01·2/100·50/100 = 0.0001 BTC; due 0.0101 BTC; display 0.01 × 60000 = 600.00 EUR, fee 6.00 EUR
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'crypto-fee-1', businessId: shop.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
    }, shop);
    expect(res.statusCode).toBe(200);
    const p = res.json().paymentInfo;
    expect(p.expectedDepositAmount).toBe('0.0101');
    expect(p.expectedDepositDistributedUserServiceFee).toBe('0.0001');
    expect(p.expectedDisplayAmount).toBe('600.00');
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('6.00');
  });

  it('allowed networks narrow what REST payments accept', async () => {
    const shop = await t.addBusiness({ name: 'Network shop' });
    const updated = await client(admin.token).businesses.update.mutate({
      businessId: shop.businessId,
      allowedNetworks: { USDC: ['ETH', 'SOL'] },
    });
    expect(updated.allowedNetworks).toEqual({ USDC: ['ETH', 'SOL'] });
    const refused = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'usdc-trx', businessId: shop.businessId, locale: 'en', depositCurrency: 'USDC', depositAmount: '10', network: 'TRX',
    }, shop);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('NETWORK_NOT_ALLOWED');
    const accepted = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'usdc-sol', businessId: shop.businessId, locale: 'en', depositCurrency: 'USDC', depositAmount: '10', network: 'SOL',
    }, shop);
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().paymentInfo.expectedNetwork).toBe('SOL');
  });

  it.each([
    ['a malformed callback URL', { paymentCallbackUrl: 'not a url' }],
    ['a non-http callback URL', { withdrawalCallbackUrl: 'ftp://shop.example/cb' }],
    ['a network the currency is not deposited on', { allowedNetworks: { BTC: ['ETH'] } }],
    ['an unknown currency in allowedNetworks', { allowedNetworks: { DOGE: ['ETH'] } }],
    ['a fee above 100 %', { serviceFeePercent: '101' }],
    ['a fee a fraction above 100 %', { serviceFeePercent: '100.9999' }],
    ['a fee share a fraction above 100 %', { userFeeSharePercent: '100.5' }],
    ['a block threshold above 10', { riskBlockThreshold: '10.5' }],
    ['a negative fee share', { userFeeSharePercent: '-1' }],
    ['a fee as a number', { serviceFeePercent: 2 }],
    ['an unknown settlement currency', { settlementCurrency: 'DOGE' }],
    ['a name with a NUL byte (PostgreSQL cannot store it: it was a 500)', { name: 'x\u0000y' }],
  ])('refuses %s: BAD_REQUEST, nothing changes', async (_label, change) => {
    const a = client(admin.token);
    const before = await a.businesses.get.query({ businessId: t.business.businessId });
    const e = await trpcError(
      a.businesses.update.mutate({ businessId: t.business.businessId, ...(change as object) } as Parameters<typeof a.businesses.update.mutate>[0]),
    );
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.httpStatus).toBe(400);
    const after = await a.businesses.get.query({ businessId: t.business.businessId });
    expect(after).toEqual(before);
  });

  it('refuses a review threshold above the block threshold, as they would stand after the change: 422 RISK_THRESHOLDS_INVERTED, nothing changes', async () => {
    const a = client(admin.token);
    const before = await a.businesses.get.query({ businessId: t.business.businessId });
    // Each alone against the stored other (review 5, block 8 unless changed), and both at once.
    for (const change of [{ riskReviewThreshold: '9' }, { riskBlockThreshold: '4.9' }, { riskReviewThreshold: '7', riskBlockThreshold: '6' }]) {
      const e = await trpcError(a.businesses.update.mutate({ businessId: t.business.businessId, ...change }));
      expect([e.code, e.httpStatus]).toEqual(['UNPROCESSABLE_CONTENT', 422]);
      expect(e.message).toMatch(/review threshold .* is above the block threshold/);
    }
    expect(await a.businesses.get.query({ businessId: t.business.businessId })).toEqual(before);
    // Equal turns review off on purpose; moving both in one change is judged as it will stand.
    const equal = await a.businesses.update.mutate({ businessId: t.business.businessId, riskReviewThreshold: before.riskBlockThreshold });
    expect(equal.riskReviewThreshold).toBe(before.riskBlockThreshold);
    const both = await a.businesses.update.mutate({ businessId: t.business.businessId, riskReviewThreshold: '9.5', riskBlockThreshold: '9.8' });
    expect(both).toMatchObject({ riskReviewThreshold: '9.5', riskBlockThreshold: '9.8' });
    await a.businesses.update.mutate({ businessId: t.business.businessId, riskReviewThreshold: before.riskReviewThreshold, riskBlockThreshold: before.riskBlockThreshold });
  });

  it('businesses.create (admin): a business and a key with every scope, its secrets shown once, that the REST API takes', async () => {
    expect((await trpcError(client(viewer.token).businesses.create.mutate({ name: 'Nope' }))).code).toBe('FORBIDDEN');
    const created = await client(admin.token).businesses.create.mutate({ name: 'Made over tRPC', paymentCallbackUrl: 'https://shop.example/kassa' });
    expect(created.business).toMatchObject({ name: 'Made over tRPC', paymentCallbackUrl: 'https://shop.example/kassa', withdrawalCallbackUrl: null });
    expect(created.apiKey).toMatch(/^kk_/);
    expect(created.apiSecret).toMatch(/^ks_/);
    expect(created.callbackSecret).toMatch(/^whsec_/);
    expect(JSON.stringify(created.business)).not.toContain('callbackSecret');
    const who = { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret, callbackSecret: created.callbackSecret };
    expect((await t.signed('GET', '/v1/balances', undefined, who)).statusCode).toBe(200);
    expect((await client(admin.token).businesses.get.query({ businessId: created.business.id })).name).toBe('Made over tRPC');
  });

  it('deposits.get: one deposit as deposits.list shows it; an unknown id is NOT_FOUND', async () => {
    const res = await t.signed('POST', '/v1/payments', { ...fiatBody(t.business), displayCurrency: undefined, displayAmount: undefined, depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' });
    const paymentId = res.json().paymentInfo.paymentId as string;
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01', confirm: false });
    expect(sim.statusCode, sim.body).toBe(200);
    const depositId = sim.json().deposit.id as string;
    const one = await client(viewer.token).deposits.get.query({ depositId });
    const [listed] = await client(viewer.token).deposits.list.query({ paymentId });
    expect(one).toEqual(listed);
    expect(one).toMatchObject({ id: depositId, paymentId, businessId: t.business.businessId, depositAmount: '0.01' });
    expect((await trpcError(client(viewer.token).deposits.get.query({ depositId: '00000000-0000-4000-8000-000000000000' }))).code).toBe('NOT_FOUND');
  });

  it('refuses a deposit search with a control character (a NUL byte was a 500): BAD_REQUEST, from a viewer too', async () => {
    const e = await trpcError(client(viewer.token).deposits.list.query({ search: 'ab\u0000c' }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.httpStatus).toBe(400);
    // One sentence, the field named in fieldErrors: not zod's issue list with its patterns.
    expect(e.message).toBe('The request is invalid.');
  });

  it('refuses a malformed businessId: BAD_REQUEST', async () => {
    const e = await trpcError(client(admin.token).businesses.get.query({ businessId: 'not-a-uuid' }));
    expect(e.code).toBe('BAD_REQUEST');
  });
});

describe('payments', () => {
  it('payments.get of a REST-created payment equals the REST GET body', async () => {
    const created = await t.signed('POST', '/v1/payments', fiatBody(t.business, { displayAmount: '25.00' }));
    expect(created.statusCode).toBe(200);
    const paymentId: string = created.json().paymentInfo.paymentId;
    const rest = await t.signed('GET', `/v1/payments/${paymentId}`);
    expect(rest.statusCode).toBe(200);
    const viaTrpc = await client(viewer.token).payments.get.query({ paymentId });
    expect(viaTrpc).toEqual(rest.json());
    expect(viaTrpc.expectedDisplayAmount).toBe('25.00');

    const crypto = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'trpc-btc', businessId: t.business.businessId, locale: 'de', depositCurrency: 'BTC', depositAmount: '0.0025', network: 'BTC',
    });
    expect(crypto.statusCode).toBe(200);
    const cryptoId: string = crypto.json().paymentInfo.paymentId;
    const cryptoRest = await t.signed('GET', `/v1/payments/${cryptoId}`);
    expect(await client(admin.token).payments.get.query({ paymentId: cryptoId })).toEqual(cryptoRest.json());
  });

  it('payments.list filters by businessId', async () => {
    const one = await t.addBusiness({ name: 'List one' });
    const two = await t.addBusiness({ name: 'List two' });
    const oneIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000); // distinct creation times, so "newest first" is well defined
      const res = await t.signed('POST', '/v1/payments', fiatBody(one), one);
      expect(res.statusCode).toBe(200);
      oneIds.push(res.json().paymentInfo.paymentId);
    }
    const twoRes = await t.signed('POST', '/v1/payments', fiatBody(two), two);
    expect(twoRes.statusCode).toBe(200);
    const twoId: string = twoRes.json().paymentInfo.paymentId;

    const v = client(viewer.token);
    const pageOne = await v.payments.list.query({ businessId: one.businessId });
    expect(pageOne.items.map((p) => p.paymentId).sort()).toEqual([...oneIds].sort());
    expect(pageOne.items.every((p) => p.businessId === one.businessId)).toBe(true);
    expect(pageOne.nextCursor).toBeNull();
    // Newest first.
    expect(pageOne.items.map((p) => p.paymentId)).toEqual([...oneIds].reverse());

    const pageTwo = await v.payments.list.query({ businessId: two.businessId });
    expect(pageTwo.items.map((p) => p.paymentId)).toEqual([twoId]);

    // Unfiltered, an operator sees every business's payments.
    const all = await v.payments.list.query({ limit: 100 });
    const allIds = all.items.map((p) => p.paymentId);
    expect(allIds).toEqual(expect.arrayContaining([...oneIds, twoId]));

    // Paging within one business.
    const first = await v.payments.list.query({ businessId: one.businessId, limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = await v.payments.list.query({ businessId: one.businessId, limit: 2, cursor: first.nextCursor! });
    expect(second.items.map((p) => p.paymentId)).toEqual([oneIds[0]]);
    expect(second.nextCursor).toBeNull();
  });

  it('payments.list refuses a bad limit: BAD_REQUEST', async () => {
    expect((await trpcError(client(viewer.token).payments.list.query({ limit: 0 }))).code).toBe('BAD_REQUEST');
    expect((await trpcError(client(viewer.token).payments.list.query({ limit: 101 }))).code).toBe('BAD_REQUEST');
  });
});

describe('createCaller without HTTP', () => {
  it('runs procedures with the operator from createContextInner and enforces roles', async () => {
    const createCaller = createCallerFactory(appRouter);
    const asAdmin = createCaller(createContextInner({ deps: t.deps, operator: { id: admin.operatorId, name: 'ann', role: 'admin' } }));
    const asViewer = createCaller(createContextInner({ deps: t.deps, operator: { id: viewer.operatorId, name: 'vic', role: 'viewer' } }));
    const anonymous = createCaller(createContextInner({ deps: t.deps }));

    const shop = await t.addBusiness({ name: 'Caller shop' });
    const updated = await asAdmin.businesses.update({ businessId: shop.businessId, name: 'Caller shop renamed', settlementCurrency: 'USD' });
    expect(updated.name).toBe('Caller shop renamed');
    expect(updated.settlementCurrency).toBe('USD');
    expect((await asViewer.businesses.get({ businessId: shop.businessId })).name).toBe('Caller shop renamed');

    await expect(asViewer.businesses.update({ businessId: shop.businessId, name: 'nope' })).rejects.toSatisfy(
      (e: unknown) => e instanceof TRPCError && e.code === 'FORBIDDEN',
    );
    await expect(anonymous.businesses.get({ businessId: shop.businessId })).rejects.toSatisfy(
      (e: unknown) => e instanceof TRPCError && e.code === 'UNAUTHORIZED',
    );
    await expect(asAdmin.businesses.update({ businessId: shop.businessId, allowedNetworks: { BTC: ['ETH'] } })).rejects.toSatisfy(
      (e: unknown) => e instanceof TRPCError && e.code === 'BAD_REQUEST',
    );

    // A crypto payment for the USD-settled business is displayed in USD: 0.0025 × 60000 / 0.92 = 163.0434… → 163.04
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'caller-btc', businessId: shop.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.0025', network: 'BTC',
    }, shop);
    expect(res.statusCode).toBe(200);
    const got = await asViewer.payments.get({ paymentId: res.json().paymentInfo.paymentId });
    expect(got.displayCurrency).toBe('USD');
    expect(got.expectedDisplayAmount).toBe('163.04');
    expect(got.expectedUniformAmount).toBe('150.00');
    const listed = await asViewer.payments.list({ businessId: shop.businessId });
    expect(listed.items.map((p) => p.paymentId)).toEqual([got.paymentId]);
  });
});
