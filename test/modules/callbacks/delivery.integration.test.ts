/**
 * Callback delivery end to end (CONTRACT §6, spec §6.1): a real local HTTP
 * receiver, the real graphile-worker, a 1 s retry interval and a 3 s window.
 * Checks the fixed schedule in `callback_attempts` (planned_at = first +
 * (n − 1) × interval exactly), that retries stop on success and after the
 * window, Standard Webhooks signatures with a stable webhook-id and a fresh
 * timestamp per attempt, exact BLOCKED/FAILED/COMPLETED bodies, operator
 * redelivery, and payment status callbacks.
 */
import { PaymentCallbackSchema } from '../../../server/modules/callbacks/callback-body.schema.js';
import { TRPCError } from '@trpc/server';
import { eq, sql } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackAttempts, callbackDeliveries } from '../../../db/schema.js';
import { createOperator } from '../../../server/modules/businesses/business.service.js';
import { verifyCallback } from '../../../server/modules/callbacks/signing.js';
import { sandboxTxHash } from '../../../server/modules/networks/tx-hash.rules.js';
import { getBalances, postEntries } from '../../../server/modules/ledger/ledger.service.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import { checkoutRouter } from '../../../server/edges/checkout/checkout-router.js';
import { appRouter } from '../../../server/edges/trpc/app-router.js';
import { createContextInner, type Operator } from '../../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';
import { headersOf, Receiver, sleep, type Hit } from './receiver.js';

const BTC_ADDRESS = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const XRP_ADDRESS = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
/** The sandbox AML scores every address 0.0–2.9: the clean band's owner. */
const CLEAN_OWNER = { name: 'Unhosted wallet', category: 'unhosted_wallet' };
const INTERVAL_MS = 1000;

let t: TestApp;
let worker: Runner;
let admin: Operator;
let viewer: Operator;
const rx = new Receiver();
const createCaller = createCallerFactory(appRouter);
const as = (operator: Operator) => createCaller(createContextInner({ deps: t.deps, operator }));

beforeAll(async () => {
  await rx.start();
  t = await startTestApp({
    env: {
      KASSA_CALLBACK_RETRY_INTERVAL_S: '1',
      KASSA_CALLBACK_RETRY_WINDOW_S: '3',
      KASSA_SANDBOX_BROADCAST_DELAY_S: '0',
      KASSA_SANDBOX_CONFIRM_DELAY_S: '0',
    },
  });
  // The test clock is frozen by default; here it follows real time, so that job run_at times,
  // attempt start times and webhook timestamps are real (graphile-worker schedules by the database clock).
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
  const a = await createOperator(t.db.db, 'ann', 'admin');
  const v = await createOperator(t.db.db, 'vic', 'viewer');
  admin = { id: a.operatorId, name: 'ann', role: 'admin' };
  viewer = { id: v.operatorId, name: 'vic', role: 'viewer' };
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await rx.stop();
});

let seq = 0;
async function shop(path: string, settings: Record<string, unknown> = {}): Promise<TestBusiness> {
  const b = await t.addBusiness({ name: `Shop ${path}`, withdrawalCallbackUrl: rx.url(path), ...settings });
  await postEntries(t.db.db, [{ businessId: b.businessId, account: 'MERCHANT', currency: 'EUR', amount: '10000.00', kind: 'TEST' }], new Date());
  return b;
}

async function withdraw(b: TestBusiness, overrides: Record<string, unknown> = {}) {
  const body = {
    clientWithdrawalId: `cb-${++seq}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC_ADDRESS, amount: '0.01',
    ...overrides,
  };
  const res = await t.signed('POST', '/v1/withdrawals', body, b);
  expect(res.statusCode, res.body).toBe(200);
  return { ...(res.json() as { withdrawalId: string; status: string }), clientWithdrawalId: body.clientWithdrawalId };
}

async function deliveriesOf(subjectId: string) {
  return t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, subjectId)).orderBy(callbackDeliveries.createdAt);
}

async function deliveryWhen(subjectId: string, status: string, timeoutMs = 10_000) {
  return eventually(async () => {
    const [d] = await deliveriesOf(subjectId);
    return d?.status === status ? d : null;
  }, timeoutMs, `delivery ${status}`);
}

async function attemptsOf(deliveryId: string) {
  return t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, deliveryId)).orderBy(callbackAttempts.attempt);
}

/** What is left scheduled of a delivery: its next attempt and a dispatcher's lease on it (the row is the whole schedule). */
async function scheduled(deliveryId: string) {
  const [d] = await t.db.db
    .select({ status: callbackDeliveries.status, nextAttemptAt: callbackDeliveries.nextAttemptAt, lockedUntil: callbackDeliveries.lockedUntil })
    .from(callbackDeliveries)
    .where(eq(callbackDeliveries.id, deliveryId));
  return d;
}

/** The TRPCError a call fails with; fails the test when the call succeeds. */
async function trpcError(call: Promise<unknown>): Promise<TRPCError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }
  throw new Error('expected the call to fail');
}

/** Every hit verifies, carries the same webhook-id and the same body bytes. */
function expectSameSignedMessage(hits: Hit[], secret: string, webhookId: string, body: string) {
  for (const h of hits) {
    expect(h.headers['webhook-id']).toBe(webhookId);
    expect(h.body).toBe(body);
    expect(() => verifyCallback(secret, headersOf(h), h.body)).not.toThrow();
    expect(h.headers['content-type']).toMatch(/^application\/json/);
  }
}

describe('retries on a fixed schedule', () => {
  it('a receiver failing 3 times then answering 200 gets exactly 4 attempts, 1 s apart, and none after', async () => {
    rx.on('/flaky', (n, _req, res) => res.writeHead(n <= 3 ? 500 : 200).end());
    const b = await shop('/flaky');
    const w = await withdraw(b);

    // while it is being retried an operator cannot start a redelivery
    await eventually(async () => rx.hitsFor('/flaky').length >= 1, 10_000, 'first attempt');
    const [inFlight] = await deliveriesOf(w.withdrawalId);
    expect((await trpcError(as(admin).callbacks.redeliver({ deliveryId: inFlight!.id }))).code).toBe('CONFLICT');

    const d = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const attempts = await attemptsOf(d.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 200]);
    expect(attempts.map((a) => a.error)).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500', null]);
    const first = d.firstAttemptAt.getTime();
    attempts.forEach((a, i) => {
      expect(a.plannedAt.getTime(), `attempt ${a.attempt} planned`).toBe(first + i * INTERVAL_MS);
      expect(a.startedAt.getTime(), `attempt ${a.attempt} started`).toBeGreaterThanOrEqual(a.plannedAt.getTime());
      expect(a.startedAt.getTime() - a.plannedAt.getTime(), `attempt ${a.attempt} late`).toBeLessThan(INTERVAL_MS);
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
    });
    expect(d.attempts).toBe(4);
    expect(d.deliveredAt).not.toBeNull();
    expect(d.nextAttemptAt).toBeNull();

    const hits = rx.hitsFor('/flaky');
    expect(hits).toHaveLength(4);
    expectSameSignedMessage(hits, b.callbackSecret, d.webhookId, d.body);
    // a fresh timestamp (and so signature) per attempt: the second the attempt started
    hits.forEach((h, i) => expect(Number(h.headers['webhook-timestamp'])).toBe(Math.floor(attempts[i]!.startedAt.getTime() / 1000)));
    expect(Number(hits[3]!.headers['webhook-timestamp']) - Number(hits[0]!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(2);
    expect(new Set(hits.map((h) => h.headers['webhook-signature'])).size).toBeGreaterThan(1);

    // the COMPLETED body, exactly (0.01 BTC paid by the business: 0.01002 × 60000 = 601.20 EUR)
    expect(JSON.parse(hits[0]!.body)).toEqual({
      status: 'COMPLETED',
      clientWithdrawalId: w.clientWithdrawalId,
      businessId: b.businessId,
      withdrawalId: w.withdrawalId,
      displayCurrency: 'EUR',
      withdrawCurrency: 'BTC',
      settlementCurrency: 'EUR',
      expectedDisplayAmount: '600.00',
      actualDisplayAmount: '600.00',
      estimatedWithdrawAmount: '0.01',
      actualWithdrawAmount: '0.01',
      deductedSettlementAmount: '601.20',
      withdrawFee: '0.00002',
      displayFee: '1.20',
      displayRateDepegLossAmount: '0.00',
      settlementRateDepegLossAmount: '0.00',
      toTxAddress: BTC_ADDRESS,
      transactionId: sandboxTxHash('BTC', `withdrawal:${w.withdrawalId}`),
      txAddressOwner: CLEAN_OWNER,
    });

    // nothing more after the success
    await sleep(INTERVAL_MS + 300);
    expect(rx.hitsFor('/flaky')).toHaveLength(4);
    expect(await attemptsOf(d.id)).toHaveLength(4);
    expect(await scheduled(d.id)).toEqual({ status: 'DELIVERED', nextAttemptAt: null, lockedUntil: null });
  });

  it('3xx and 4xx answers are retried too (redirects are not followed); the first 2xx ends it', async () => {
    const answers = [302, 404, 201];
    rx.on('/mixed', (n, _req, res) => res.writeHead(answers[n - 1] ?? 500, n === 1 ? { location: rx.url('/elsewhere') } : {}).end());
    const b = await shop('/mixed');
    const w = await withdraw(b);
    const d = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const attempts = await attemptsOf(d.id);
    expect(attempts.map((a) => a.statusCode)).toEqual([302, 404, 201]);
    // Each attempt in the next slot of the fixed grid. A slot already past when the previous attempt
    // ended is skipped (nextAttemptAt: a late worker does not burst), which a loaded CI machine made
    // happen once ([0, 1000, 3000]): then the attempt is in a later slot, after that end.
    const first = d.firstAttemptAt.getTime();
    const offsets = attempts.map((a) => a.plannedAt.getTime() - first);
    expect(offsets[0]).toBe(0);
    for (const [i, offset] of offsets.entries()) {
      if (i === 0) continue;
      const previous = attempts[i - 1]!;
      const previousEnded = previous.startedAt.getTime() + previous.latencyMs - first;
      const slot = i * INTERVAL_MS;
      // Ended well before its successor's slot (a quarter second for writing its outcome): that very slot.
      if (previousEnded < slot - 250) expect(offset, `attempt ${i + 1} planned`).toBe(slot);
      else {
        expect(offset % INTERVAL_MS, `attempt ${i + 1} on the grid`).toBe(0);
        expect(offset, `attempt ${i + 1} after attempt ${i} ended`).toBeGreaterThanOrEqual(Math.max(slot, previousEnded));
      }
    }
    expect(rx.hitsFor('/mixed')).toHaveLength(3);
    expect(rx.hitsFor('/elsewhere')).toHaveLength(0);
  });

  it('a receiver that always fails gets attempts at 0, 1, 2 and 3 s, then the delivery EXPIRES; an operator can redeliver', async () => {
    let down = true;
    rx.on('/down', (_n, _req, res) => res.writeHead(down ? 503 : 204).end());
    const b = await shop('/down');
    const w = await withdraw(b);
    const d = await deliveryWhen(w.withdrawalId, 'EXPIRED');
    const attempts = await attemptsOf(d.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(attempts.map((a) => a.plannedAt.getTime() - d.firstAttemptAt.getTime())).toEqual([0, 1000, 2000, 3000]);
    for (const a of attempts) {
      expect(a.statusCode).toBe(503);
      expect(a.startedAt.getTime()).toBeGreaterThanOrEqual(a.plannedAt.getTime());
    }
    expect(d.nextAttemptAt).toBeNull();
    expect(d.deliveredAt).toBeNull();
    const hits = rx.hitsFor('/down');
    expect(hits).toHaveLength(4);
    expectSameSignedMessage(hits, b.callbackSecret, d.webhookId, d.body);
    await sleep(INTERVAL_MS + 300);
    expect(rx.hitsFor('/down')).toHaveLength(4);
    expect(await scheduled(d.id)).toEqual({ status: 'EXPIRED', nextAttemptAt: null, lockedUntil: null });

    // the receiver is fixed; an operator redelivers the expired callback: same webhook-id and body, a new schedule
    down = false;
    expect(await as(admin).callbacks.redeliver({ deliveryId: d.id })).toEqual({ deliveryId: d.id, status: 'PENDING' });
    const again = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const after = await attemptsOf(d.id);
    expect(after.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(after[4]!.statusCode).toBe(204);
    expect(after[4]!.plannedAt.getTime()).toBe(again.firstAttemptAt.getTime());
    expect(again.firstAttemptAt.getTime()).toBeGreaterThan(d.firstAttemptAt.getTime());
    expect(rx.hitsFor('/down')).toHaveLength(5);
    expectSameSignedMessage(rx.hitsFor('/down'), b.callbackSecret, d.webhookId, d.body);
  });
});

describe('redelivery and the attempt log (tRPC)', () => {
  it('callbacks.redeliver sends a delivered callback again under the same webhook-id; callbacks.attempts lists every attempt', async () => {
    const b = await shop('/redeliver');
    const w = await withdraw(b);
    const d = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    expect(rx.hitsFor('/redeliver')).toHaveLength(1);

    expect((await trpcError(as(viewer).callbacks.redeliver({ deliveryId: d.id }))).code).toBe('FORBIDDEN');
    expect((await trpcError(as(admin).callbacks.redeliver({ deliveryId: '00000000-0000-4000-8000-000000000000' }))).code).toBe('NOT_FOUND');

    await as(admin).callbacks.redeliver({ deliveryId: d.id });
    await eventually(async () => rx.hitsFor('/redeliver').length === 2, 10_000, 'redelivered callback');
    const again = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const hits = rx.hitsFor('/redeliver');
    expectSameSignedMessage(hits, b.callbackSecret, d.webhookId, d.body);
    expect(Number(hits[1]!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(hits[0]!.headers['webhook-timestamp']));

    const log = await as(viewer).callbacks.attempts({ deliveryId: d.id });
    expect(log.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 200, null],
      [2, 200, null],
    ]);
    // tRPC answers times as REST does: integers, UNIX seconds.
    expect(log[1]!.plannedAt).toBe(Math.floor(again.firstAttemptAt.getTime() / 1000));
    for (const a of log) {
      expect(Number.isInteger(a.startedAt)).toBe(true);
      expect(typeof a.latencyMs).toBe('number');
    }
    const listed = await as(viewer).callbacks.list({ subjectId: w.withdrawalId });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: d.id, status: 'DELIVERED', attempts: 2, webhookId: d.webhookId, kind: 'WITHDRAWAL' });
    expect((listed[0]!.body as { status: string }).status).toBe('COMPLETED');
  });
});

describe('FAILED and BLOCKED callbacks', () => {
  it('BLOCKED (destination risk at the block threshold): exact body with nulls, balance credited back', async () => {
    // Every sandbox address scores 0.0–2.9, so a block threshold of 0 blocks any destination.
    const b = await shop('/blocked', { riskBlockThreshold: '0' });
    const w = await withdraw(b, { withdrawCurrency: 'XRP', network: 'XRP', address: XRP_ADDRESS, destinationTag: '777', amount: '10' });
    const d = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const got = (await t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`, undefined, b)).json();
    expect(got.status).toBe('BLOCKED');
    const [hit] = rx.hitsFor('/blocked');
    expect(rx.hitsFor('/blocked')).toHaveLength(1);
    const body = verifyCallback(b.callbackSecret, headersOf(hit!), hit!.body);
    expect(hit!.headers['webhook-id']).toBe(d.webhookId);
    const { toTxAddress, ...rest } = JSON.parse(hit!.body) as Record<string, unknown>;
    expect(rest).toEqual({
      status: 'BLOCKED',
      clientWithdrawalId: w.clientWithdrawalId,
      businessId: b.businessId,
      withdrawalId: w.withdrawalId,
      displayCurrency: 'EUR',
      withdrawCurrency: 'XRP',
      settlementCurrency: 'EUR',
      expectedDisplayAmount: '5.00', // 10 XRP × 0.5
      estimatedWithdrawAmount: '10',
      txAddressOwner: CLEAN_OWNER,
      actualDisplayAmount: null,
      actualWithdrawAmount: null,
      deductedSettlementAmount: null,
      withdrawFee: null,
      displayFee: null,
      displayRateDepegLossAmount: null,
      settlementRateDepegLossAmount: null,
      settlementServiceFee: null,
      settlementMerchantTransactionFee: null,
      transactionId: null,
    });
    // the destination tag follows the address in the same string
    expect(String(toTxAddress).startsWith(XRP_ADDRESS)).toBe(true);
    expect(String(toTxAddress).endsWith('777')).toBe(true);
    expect(String(toTxAddress).length).toBeGreaterThan(XRP_ADDRESS.length + 3);
    expect(body.status).toBe('BLOCKED');
    const eur = (await getBalances(t.db.db, b.businessId)).find((r) => r.currency === 'EUR')!;
    expect(new Dec(eur.amount).toFixed(2)).toBe('10000.00');
  });

  it('FAILED (sandbox outcome): exact body without actual amounts, fees or transactionId', async () => {
    // Approval policy ONE keeps it in PENDING_APPROVAL, out of the worker's reach, until the outcome is forced.
    const b = await shop('/failed', { approvalPolicy: 'ONE' });
    const w = await withdraw(b);
    expect(w.status).toBe('PENDING_APPROVAL');
    // Sending it is the approvers' decision, in sandbox too: COMPLETED is refused, nothing changes.
    const early = await t.signed('POST', `/v1/test-helpers/withdrawals/${w.withdrawalId}/outcome`, { status: 'COMPLETED' }, b);
    expect(early.statusCode, early.body).toBe(422);
    expect(early.json()).toMatchObject({ code: 'WITHDRAWAL_AWAITING_APPROVAL' });
    const still = await t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`, undefined, b);
    expect(still.json()).toMatchObject({ status: 'PENDING_APPROVAL' });
    const forced = await t.signed('POST', `/v1/test-helpers/withdrawals/${w.withdrawalId}/outcome`, { status: 'FAILED' }, b);
    expect(forced.statusCode, forced.body).toBe(200);
    const d = await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const [hit] = rx.hitsFor('/failed');
    expect(verifyCallback(b.callbackSecret, headersOf(hit!), hit!.body)).toEqual({
      status: 'FAILED',
      clientWithdrawalId: w.clientWithdrawalId,
      businessId: b.businessId,
      withdrawalId: w.withdrawalId,
      displayCurrency: 'EUR',
      withdrawCurrency: 'BTC',
      settlementCurrency: 'EUR',
      expectedDisplayAmount: '600.00',
      estimatedWithdrawAmount: '0.01',
      toTxAddress: BTC_ADDRESS,
      txAddressOwner: CLEAN_OWNER,
    });
    expect(hit!.headers['webhook-id']).toBe(d.webhookId);
    expect(rx.hitsFor('/failed')).toHaveLength(1);
  });

  it('REJECTED by an approver ends as a FAILED callback', async () => {
    const b = await shop('/rejected', { approvalPolicy: 'ONE' });
    const w = await withdraw(b);
    await as(admin).withdrawals.reject({ withdrawalId: w.withdrawalId });
    await deliveryWhen(w.withdrawalId, 'DELIVERED');
    const [hit] = rx.hitsFor('/rejected');
    const body = verifyCallback(b.callbackSecret, headersOf(hit!), hit!.body);
    expect(body.status).toBe('FAILED');
    expect(body.withdrawalId).toBe(w.withdrawalId);
    expect(Object.keys(body).sort()).toEqual([
      'businessId', 'clientWithdrawalId', 'displayCurrency', 'estimatedWithdrawAmount', 'expectedDisplayAmount', 'settlementCurrency', 'status',
      'toTxAddress', 'txAddressOwner', 'withdrawCurrency', 'withdrawalId',
    ]);
  });
});

describe('payment status callbacks', () => {
  it('one signed callback per status change, in order: PENDING → AWAITING → DEPOSITED', async () => {
    const b = await t.addBusiness({ name: 'Payments', paymentCallbackUrl: rx.url('/payments') });
    const created = await t.signed(
      'POST',
      '/v1/payments',
      { clientPaymentId: 'pay-1', businessId: b.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' },
      b,
    );
    expect(created.statusCode, created.body).toBe(200);
    const payment = created.json().paymentInfo as { paymentId: string; status: string; expectedDepositAmount: string };
    expect(payment.status).toBe('PENDING');
    // creation is answered synchronously: no callback for it
    await sleep(300);
    expect(rx.hitsFor('/payments')).toHaveLength(0);

    const sim = await t.signed(
      'POST',
      `/v1/test-helpers/payments/${payment.paymentId}/deposits`,
      { depositCurrency: 'BTC', network: 'BTC', amount: payment.expectedDepositAmount },
      b,
    );
    expect(sim.statusCode, sim.body).toBe(200);
    await eventually(async () => rx.hitsFor('/payments').length >= 2, 10_000, 'two payment callbacks');
    const final = (await t.signed('GET', `/v1/payments/${payment.paymentId}`, undefined, b)).json();
    expect(final.status).toBe('DEPOSITED');

    await sleep(500);
    const hits = rx.hitsFor('/payments');
    expect(hits).toHaveLength(2);
    const bodies = hits.map((h) => verifyCallback(b.callbackSecret, headersOf(h), h.body));
    expect(bodies.map((x) => [x.type, x.previousStatus, x.status])).toEqual([
      ['payment.status_changed', 'PENDING', 'AWAITING'],
      ['payment.status_changed', 'AWAITING', 'DEPOSITED'],
    ]);
    for (const x of bodies) {
      expect(x.paymentId).toBe(payment.paymentId);
      expect(x.clientPaymentId).toBe('pay-1');
      expect(x.businessId).toBe(b.businessId);
      expect((x.payment as { status: string }).status).toBe(x.status);
      // The body is what OpenAPI documents under webhooks.paymentCallback (strict schemas).
      expect(PaymentCallbackSchema.safeParse(x).error).toBeUndefined();
      expect(typeof x.changedAt).toBe('number');
    }
    expect(bodies[0]!.changedAt as number).toBeLessThanOrEqual(bodies[1]!.changedAt as number);
    // the payment's events counted: its creation (1), then one per change
    expect(bodies.map((x) => x.sequence)).toEqual([2, 3]);
    expect(hits[0]!.headers['webhook-id']).not.toBe(hits[1]!.headers['webhook-id']);
    const deliveries = await deliveriesOf(payment.paymentId);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.every((d) => d.kind === 'PAYMENT' && d.status === 'DELIVERED')).toBe(true);
  });

  it('a retried callback keeps its sequence: applying only a higher one ends at the last change, whatever the arrival order', async () => {
    const b = await t.addBusiness({ name: 'Ordered payments', paymentCallbackUrl: rx.url('/ordered') });
    // The first callback (PENDING → AWAITING) fails once, then everything is answered 200.
    rx.on('/ordered', (n, _req, res) => res.writeHead(n === 1 ? 503 : 204).end());
    const created = await t.signed(
      'POST',
      '/v1/payments',
      { clientPaymentId: 'ordered-1', businessId: b.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' },
      b,
    );
    const payment = created.json().paymentInfo as { paymentId: string; expectedDepositAmount: string };
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${payment.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: payment.expectedDepositAmount }, b);
    expect(sim.statusCode, sim.body).toBe(200);
    await eventually(async () => rx.hitsFor('/ordered').length >= 3, 10_000, 'three payment callback attempts');
    const hits = rx.hitsFor('/ordered');
    const bodies = hits.map((h) => verifyCallback(b.callbackSecret, headersOf(h), h.body));
    const byStatus = Object.fromEntries(bodies.map((x) => [x.status as string, x.sequence]));
    expect(byStatus).toEqual({ AWAITING: 2, DEPOSITED: 3 });
    // The retry is the same callback: same webhook-id, same sequence.
    const awaiting = hits.filter((_, i) => bodies[i]!.status === 'AWAITING');
    expect(awaiting).toHaveLength(2);
    expect(awaiting[0]!.headers['webhook-id']).toBe(awaiting[1]!.headers['webhook-id']);
    // A receiver as the README says: apply what is newer than the last applied, in arrival order
    // (the 503 one was not applied), and in the order reversed too.
    const apply = (order: typeof bodies) =>
      order.reduce<{ status: string; sequence: number } | null>(
        (last, x) => (last === null || (x.sequence as number) > last.sequence ? { status: x.status as string, sequence: x.sequence as number } : last),
        null,
      );
    const delivered = bodies.filter((_, i) => i > 0);
    expect(apply(delivered)?.status).toBe('DEPOSITED');
    expect(apply([...delivered].reverse())?.status).toBe('DEPOSITED');
  });

  it('money credited with the status unchanged is a payment.deposit_credited callback: a REUSABLE payment\'s second deposit', async () => {
    const b = await t.addBusiness({ name: 'Reusable payments', paymentCallbackUrl: rx.url('/reusable') });
    const created = await t.signed(
      'POST',
      '/v1/payments',
      { clientPaymentId: 'reuse-1', businessId: b.businessId, locale: 'en', type: 'REUSABLE', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' },
      b,
    );
    expect(created.statusCode, created.body).toBe(200);
    const payment = created.json().paymentInfo as { paymentId: string };
    const pay = async (amount: string) => {
      const sim = await t.signed('POST', `/v1/test-helpers/payments/${payment.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount }, b);
      expect(sim.statusCode, sim.body).toBe(200);
    };
    await pay('0.01');
    await eventually(async () => rx.hitsFor('/reusable').length >= 2, 10_000, 'the first deposit\'s callbacks');
    await pay('0.003');
    await eventually(async () => (await t.signed('GET', `/v1/payments/${payment.paymentId}`, undefined, b)).json().deposits.length === 2, 10_000, 'the second deposit');
    await eventually(async () => rx.hitsFor('/reusable').length >= 3, 10_000, 'the second deposit\'s callback');
    await sleep(300);
    const bodies = rx.hitsFor('/reusable').map((h) => verifyCallback(b.callbackSecret, headersOf(h), h.body));
    expect(bodies.map((x) => [x.type, x.previousStatus, x.status])).toEqual([
      ['payment.status_changed', 'PENDING', 'AWAITING'],
      ['payment.status_changed', 'AWAITING', 'DEPOSITED'],
      ['payment.deposit_credited', 'DEPOSITED', 'DEPOSITED'],
    ]);
    const last = bodies[2]!;
    expect(last.sequence as number).toBeGreaterThan(bodies[1]!.sequence as number);
    expect(PaymentCallbackSchema.safeParse(last).error).toBeUndefined();
    const credited = (last.payment as { deposits: { depositAmount: string; status: string }[] }).deposits;
    expect(credited.map((d) => [d.depositAmount, d.status]).sort()).toEqual([['0.003', 'CONFIRMED'], ['0.01', 'CONFIRMED']]);
  });

  it('a fiat payment gets its NEW → PENDING callback when the end user chooses a currency', async () => {
    const b = await t.addBusiness({ name: 'Fiat payments', paymentCallbackUrl: rx.url('/fiat') });
    const created = await t.signed(
      'POST',
      '/v1/payments',
      { clientPaymentId: 'fiat-1', businessId: b.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '60.00' },
      b,
    );
    expect(created.statusCode, created.body).toBe(200);
    const { paymentInfo, paymentUrl } = created.json() as { paymentInfo: { paymentId: string; status: string }; paymentUrl: string };
    expect(paymentInfo.status).toBe('NEW');
    const token = paymentUrl.split('/checkout/')[1]!;
    const checkout = createCallerFactory(checkoutRouter)(createContextInner({ deps: t.deps }));
    await checkout.choose({ token, depositCurrency: 'BTC', network: 'BTC' });
    await eventually(async () => rx.hitsFor('/fiat').length >= 1, 10_000, 'the NEW → PENDING callback');
    await sleep(300);
    const hits = rx.hitsFor('/fiat');
    expect(hits).toHaveLength(1);
    const body = verifyCallback(b.callbackSecret, headersOf(hits[0]!), hits[0]!.body);
    expect(body).toMatchObject({ type: 'payment.status_changed', paymentId: paymentInfo.paymentId, previousStatus: 'NEW', status: 'PENDING' });
    expect((body.payment as { depositCurrency: string }).depositCurrency).toBe('BTC');
  });
});
