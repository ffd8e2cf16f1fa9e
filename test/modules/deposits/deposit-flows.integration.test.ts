import type { Runner } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createOperator } from '../../../server/modules/businesses/business.service.js';
import type { DepositReport } from '../../../server/modules/networks/ports.js';
import { settleSandboxTx } from '../../../server/adapters/chain/sandbox-faucet.js';
import { sandboxTxHash } from '../../../server/modules/networks/tx-hash.rules.js';
import { getBalances, sumEntries } from '../../../server/modules/ledger/ledger.service.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import type { PricedCurrency } from '../../../server/modules/money/catalog.js';
import { ingestDeposit } from '../../../server/modules/deposits/deposit.service.js';
import { ScreeningUnavailableError } from '../../../server/modules/compliance/index.js';
import { expirePayment, EXPIRY_LOOKAHEAD_MS, scheduleExpiries } from '../../../server/modules/payments/expiry.service.js';
import { EXPIRABLE_PAYMENT_STATUSES } from '../../../server/modules/payments/payment-states.rules.js';
import { DepositRecordSchema, PaymentRecordSchema } from '../../../server/modules/payments/payment-record.schema.js';
import { broadcastRefund } from '../../../server/modules/deposits/refund-broadcast.job.js';
import { appRouter } from '../../../server/edges/trpc/app-router.js';
import { createContextInner, type Operator } from '../../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';
import { startWorker } from '../../../jobs/worker.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';

let t: TestApp;
let worker: Runner;
beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0' } });
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

async function btcPayment(amount = '0.01', extra: Record<string, unknown> = {}) {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `p-${Math.random()}`, businessId: t.business.businessId, locale: 'en',
    depositCurrency: 'BTC', depositAmount: amount, network: 'BTC', ...extra,
  });
  expect(res.statusCode).toBe(200);
  return res.json().paymentInfo as { paymentId: string };
}

const get = async (id: string) => PaymentRecordSchema.parse((await t.signed('GET', `/v1/payments/${id}`)).json());

describe('a BTC payment paid exactly', () => {
  it('goes PENDING → AWAITING → DEPOSITED with the deposit credited', async () => {
    const p = await btcPayment();
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${p.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01' });
    expect(sim.statusCode).toBe(200);
    const done = await eventually(async () => {
      const r = await get(p.paymentId);
      return r.status === 'DEPOSITED' ? r : null;
    }, 10_000, 'DEPOSITED');
    expect(done.deposits).toHaveLength(1);
    const d = done.deposits[0]!;
    expect(d.status).toBe('CONFIRMED');
    // 0.01 BTC × 60000 EUR = 600.00 EUR; F = 1 %, U = 0: fee 6.00, payable 594.00
    expect(d.displayAmount).toBe('600.00');
    expect(d.displayServiceFee).toBe('6.00');
    expect(d.displayPayableAmount).toBe('594.00');
    expect(done.actualDepositAmount).toBe('0.01');
    expect(done.actualDisplayAmount).toBe('600.00');
  });
});

// ---------------------------------------------------------------------------
// Shared helpers (any test app, any business).
// ---------------------------------------------------------------------------
type Payment = z.infer<typeof PaymentRecordSchema>;
type Deposit = z.infer<typeof DepositRecordSchema>;
type Simulated = { transactionId: string; deposit: Deposit | null; payment: Payment };
const BTC_TX = /^[0-9a-f]{64}$/;
const ETH_TX = /^0x[0-9a-f]{64}$/;

async function createIn(app: TestApp, who: TestBusiness, body: Record<string, unknown>): Promise<Payment> {
  const res = await app.signed('POST', '/v1/payments', {
    clientPaymentId: `flow-${randomUUID()}`, businessId: who.businessId, locale: 'en', ...body,
  }, who);
  expect(res.statusCode, res.body).toBe(200);
  return PaymentRecordSchema.parse(res.json().paymentInfo);
}

async function simulateIn(app: TestApp, who: TestBusiness, paymentId: string, body: Record<string, unknown>): Promise<Simulated> {
  const res = await app.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, body, who);
  expect(res.statusCode, res.body).toBe(200);
  const json = res.json();
  return { transactionId: json.transactionId, deposit: DepositRecordSchema.nullable().parse(json.deposit), payment: PaymentRecordSchema.parse(json.payment) };
}

async function getIn(app: TestApp, who: TestBusiness, paymentId: string): Promise<Payment> {
  const res = await app.signed('GET', `/v1/payments/${paymentId}`, undefined, who);
  expect(res.statusCode, res.body).toBe(200);
  return PaymentRecordSchema.parse(res.json());
}

/** The deposit of `record` with transaction hash `txHash`. */
function depositOf(record: Payment, txHash: string): Deposit {
  const found = record.deposits.find((d) => d.transactionId === txHash);
  expect(found, `deposit ${txHash} in payment ${record.paymentId}`).toBeDefined();
  return found!;
}

const caller = (app: TestApp, operator: Operator) => createCallerFactory(appRouter)(createContextInner({ deps: app.deps, operator }));

async function adminOf(app: TestApp, name = 'ann'): Promise<Operator> {
  const { operatorId } = await createOperator(app.db.db, name, 'admin');
  return { id: operatorId, name, role: 'admin' };
}

async function rows<T>(query: Promise<unknown>): Promise<T[]> {
  return (await query) as T[];
}

// ---------------------------------------------------------------------------
// Main app shortcuts (real worker, confirmation delay 0).
// ---------------------------------------------------------------------------
const pay = (body: Record<string, unknown>, who: TestBusiness = t.business) => createIn(t, who, body);
const btc = (amount = '0.01', who: TestBusiness = t.business, extra: Record<string, unknown> = {}) =>
  pay({ depositCurrency: 'BTC', depositAmount: amount, network: 'BTC', ...extra }, who);
const send = (paymentId: string, body: Record<string, unknown>, who: TestBusiness = t.business) => simulateIn(t, who, paymentId, body);
const sendBtc = (paymentId: string, amount: string, who: TestBusiness = t.business, extra: Record<string, unknown> = {}) =>
  send(paymentId, { depositCurrency: 'BTC', network: 'BTC', amount, ...extra }, who);
const read = (paymentId: string, who: TestBusiness = t.business) => getIn(t, who, paymentId);

/**
 * Wait until the payment has `n` deposits, none unconfirmed and no refund still PENDING, and two
 * reads in a row agree (a single GET can be torn while a deposit settles: see the consistency test).
 */
async function settled(paymentId: string, n: number, who: TestBusiness = t.business): Promise<Payment> {
  let last: Payment | undefined;
  try {
    return await eventually(async () => {
      const r = (last = await read(paymentId, who));
      const done = r.deposits.length === n && r.deposits.every((d) => d.status !== 'UNCONFIRMED' && d.refund?.status !== 'PENDING');
      return done && JSON.stringify(await read(paymentId, who)) === JSON.stringify(r) ? r : null;
    }, 15_000, `payment ${paymentId} with ${n} settled deposit(s)`);
  } catch (error) {
    const seen = last && `${last.status} [${last.deposits.map((d) => `${d.status}${d.refund ? `/refund ${d.refund.status}` : ''}`).join(', ')}]`;
    throw new Error(`${(error as Error).message}; last seen: ${seen}`);
  }
}

/** The deposit's chain status as the database holds it (SEEN, CONFIRMED, DROPPED). */
async function chainStatus(app: TestApp, depositId: string): Promise<string> {
  const [row] = await rows<{ chain_status: string }>(app.db.sql`select chain_status from deposits where id = ${depositId}`);
  return row!.chain_status;
}

/** Refund events of a deposit's refund, oldest first, as "from→to". */
async function refundEvents(app: TestApp, depositId: string): Promise<string[]> {
  const events = await rows<{ from_status: string | null; to_status: string }>(app.db.sql`
    select e.from_status, e.to_status from events e join refunds r on e.entity_type = 'refund' and r.id = e.entity_id
    where r.deposit_id = ${depositId} order by e.id`);
  return events.map((e) => `${e.from_status ?? '(new)'}→${e.to_status}`);
}

const nowSeconds = (app: TestApp) => Math.floor(app.clock.now().getTime() / 1000);

function expectConfirmedRefund(app: TestApp, d: Deposit, txPattern: RegExp) {
  expect(d.refund?.status).toBe('CONFIRMED');
  expect(d.refund?.transactionId).toMatch(txPattern);
  expect(d.refund?.transactionId).not.toBe(d.transactionId);
  expect(d.refund?.confirmedAt).toBe(nowSeconds(app));
}

describe('under-payment, then a second deposit completing it', () => {
  it('0.004 of 0.01 BTC: AWAITING with actual < expected; then 0.006 more: DEPOSITED', async () => {
    const p = await btc('0.01');
    const first = await sendBtc(p.paymentId, '0.004');
    const r1 = await settled(p.paymentId, 1);
    expect(r1.status).toBe('AWAITING');
    // 0.004 × 60000 = 240.00 EUR; fee 1 % = 2.40; payable 237.60
    expect(depositOf(r1, first.transactionId)).toMatchObject({
      status: 'CONFIRMED', depositCurrency: 'BTC', network: 'BTC', depositAmount: '0.004', displayCurrency: 'EUR',
      displayAmount: '240.00', displayServiceFee: '2.40', displayPayableAmount: '237.60', displayDistributedUserServiceFee: '0.00',
      settlementCurrency: 'EUR', settlementPayableAmount: '237.60', settlementServiceFee: '2.40',
      uniformCurrency: 'EUR', uniformPayableAmount: '237.60', uniformServiceFee: '2.40', onChainFee: '0.00002',
    });
    expect(depositOf(r1, first.transactionId).refund).toBeUndefined();
    expect(r1.expectedDepositAmount).toBe('0.01');
    expect(r1.actualDepositAmount).toBe('0.004');
    expect(new Dec(r1.actualDepositAmount).lt(r1.expectedDepositAmount!)).toBe(true);
    expect(r1.actualDisplayAmount).toBe('240.00');
    expect(r1.actualUniformAmount).toBe('240.00');

    const second = await sendBtc(p.paymentId, '0.006');
    const r2 = await settled(p.paymentId, 2);
    expect(r2.status).toBe('DEPOSITED');
    // 0.006 × 60000 = 360.00; fee 3.60; payable 356.40
    expect(depositOf(r2, second.transactionId)).toMatchObject({
      status: 'CONFIRMED', depositAmount: '0.006', displayAmount: '360.00', displayServiceFee: '3.60', displayPayableAmount: '356.40',
    });
    expect(depositOf(r2, first.transactionId)).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.004', displayPayableAmount: '237.60' });
    expect(r2.deposits.every((d) => d.refund === undefined)).toBe(true);
    expect(r2.actualDepositAmount).toBe('0.01');
    expect(r2.actualDisplayAmount).toBe('600.00');
    expect(r2.actualUniformAmount).toBe('600.00');
  });
});

describe('over-payment', () => {
  it('PROCESS (the default): 0.012 of 0.01 → OVERPAID, everything credited, no refund', async () => {
    const p = await btc('0.01');
    expect(p.overpaymentPolicy).toBe('PROCESS');
    const s = await sendBtc(p.paymentId, '0.012');
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('OVERPAID');
    // 0.012 × 60000 = 720.00; fee 7.20; payable 712.80
    const d = depositOf(r, s.transactionId);
    expect(d).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.012', displayAmount: '720.00', displayServiceFee: '7.20', displayPayableAmount: '712.80' });
    expect(d.refund).toBeUndefined();
    expect(r.actualDepositAmount).toBe('0.012');
    expect(r.actualDisplayAmount).toBe('720.00');
  });

  it('EXCESS_REFUND: 0.012 of 0.01 → DEPOSITED, PARTIAL OVERPAYMENT refund of 0.002, PENDING then CONFIRMED', async () => {
    const shop = await t.addBusiness({ name: 'Excess shop', overpaymentPolicy: 'EXCESS_REFUND' });
    const p = await btc('0.01', shop);
    expect(p.overpaymentPolicy).toBe('EXCESS_REFUND');
    const s = await sendBtc(p.paymentId, '0.012', shop);
    const r = await settled(p.paymentId, 1, shop);
    expect(r.status).toBe('DEPOSITED');
    const d = depositOf(r, s.transactionId);
    // the whole deposit is shown (720.00 EUR); only 0.01 (600.00 EUR) is credited: fee 6.00, payable 594.00
    expect(d).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.012', displayAmount: '720.00', displayServiceFee: '6.00', displayPayableAmount: '594.00' });
    // excess 0.012 − 0.01 = 0.002 BTC = 120.00 EUR; network fee 0.00002 BTC = 1.20 EUR
    expect(d.refund).toMatchObject({
      type: 'PARTIAL', status: 'CONFIRMED', reason: 'OVERPAYMENT', depositCurrency: 'BTC', network: 'BTC',
      amount: '0.002', fee: '0.00002', displayCurrency: 'EUR', displayAmount: '120.00', displayFee: '1.20',
    });
    expectConfirmedRefund(t, d, BTC_TX);
    expect(await refundEvents(t, d.id)).toEqual(['(new)→PENDING', 'PENDING→CONFIRMED']);
    // credited amount = expected
    expect(r.actualDepositAmount).toBe('0.01');
    expect(r.actualDisplayAmount).toBe('600.00');
    const [row] = await rows<{ credited_amount: string }>(t.db.sql`select credited_amount::text from deposits where id = ${d.id}`);
    expect(new Dec(row!.credited_amount).eq('0.01')).toBe(true);
    // the refund went back to the sender, less the network fee: 0.002 − 0.00002 = 0.00198
    const [sent] = await rows<{ to_address: string; amount: string; currency: string }>(
      t.db.sql`select to_address, amount::text, currency from sandbox_transactions where tx_hash = ${d.refund!.transactionId!}`,
    );
    expect(sent).toBeDefined();
    expect(sent!.to_address).toBe(d.fromAddress);
    expect(sent!.currency).toBe('BTC');
    expect(new Dec(sent!.amount).eq('0.00198')).toBe(true);
    // GET reads the payment joined with its deposits in one prepared statement; the list reads a page,
    // then its deposits: both give the same record, refund included.
    const listed = await t.signed('GET', `/v1/payments?clientPaymentId=${encodeURIComponent(p.clientPaymentId)}`, undefined, shop);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().items).toStrictEqual([r]);
  });

  it('EXCESS_REFUND: an excess not above the network fee (0.00002 BTC) is NON_REFUNDABLE', async () => {
    const shop = await t.addBusiness({ name: 'Excess shop 2', overpaymentPolicy: 'EXCESS_REFUND' });
    const p = await btc('0.01', shop);
    const s = await sendBtc(p.paymentId, '0.01002', shop);
    const r = await settled(p.paymentId, 1, shop);
    expect(r.status).toBe('DEPOSITED');
    const d = depositOf(r, s.transactionId);
    // excess 0.01002 − 0.01 = 0.00002 = the BTC network fee → not refundable; 0.00002 × 60000 = 1.20 EUR
    expect(d.refund).toEqual({
      type: 'PARTIAL', status: 'NON_REFUNDABLE', reason: 'OVERPAYMENT', depositCurrency: 'BTC', network: 'BTC',
      amount: '0.00002', fee: '0.00002', displayCurrency: 'EUR', displayAmount: '1.20', displayFee: '1.20',
    });
    expect(await refundEvents(t, d.id)).toEqual(['(new)→NON_REFUNDABLE']);
    expect(r.actualDepositAmount).toBe('0.01');
  });

  it('EXCESS_REFUND, FLOATING EUR 25.00 in ETH: paying exactly the quote (8 decimals of 18) is no overpayment', async () => {
    const shop = await t.addBusiness({ name: 'Excess shop 3', overpaymentPolicy: 'EXCESS_REFUND' });
    const p = await pay({ displayCurrency: 'EUR', displayAmount: '25.00', rateType: 'FLOATING' }, shop);
    const chosen = await caller(t, await adminOf(t, 'eve')).payments.chooseCurrency({ paymentId: p.paymentId, depositCurrency: 'ETH', network: 'ETH' });
    // 25.00 / 3000 = 0.0083333… → rounded up to 8 decimals
    expect(chosen.expectedDepositAmount).toBe('0.00833334');
    const s = await send(p.paymentId, { depositCurrency: 'ETH', network: 'ETH', amount: '0.00833334' }, shop);
    const r = await settled(p.paymentId, 1, shop);
    expect(r.status).toBe('DEPOSITED');
    const d = depositOf(r, s.transactionId);
    // all of it credited: before, the cap was the rest owed at 18 decimals (0.008333333333333334), and
    // the 0.000000006666666666 ETH over it became a NON_REFUNDABLE "overpayment"
    expect(d.refund).toBeUndefined();
    expect([r.actualDepositAmount, d.displayAmount, d.displayServiceFee, d.displayPayableAmount]).toEqual(['0.00833334', '25.00', '0.25', '24.75']);
  });
});

describe('follow-up deposits on a DEPOSITED one-time payment', () => {
  it('refundFollowUpDeposits false: credited, the payment stays DEPOSITED, actual grows', async () => {
    const p = await btc('0.01');
    expect(p.refundFollowUpDepositsForOneTimePayments).toBe(false);
    await sendBtc(p.paymentId, '0.01');
    expect((await settled(p.paymentId, 1)).status).toBe('DEPOSITED');
    const late = await sendBtc(p.paymentId, '0.003');
    const r = await settled(p.paymentId, 2);
    expect(r.status).toBe('DEPOSITED');
    // 0.003 × 60000 = 180.00; fee 1.80; payable 178.20
    const d = depositOf(r, late.transactionId);
    expect(d).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.003', displayAmount: '180.00', displayServiceFee: '1.80', displayPayableAmount: '178.20' });
    expect(d.refund).toBeUndefined();
    expect(r.actualDepositAmount).toBe('0.013');
    expect(r.actualDisplayAmount).toBe('780.00');
  });

  it('refundFollowUpDeposits true: FULL refund FOLLOW_UP_DEPOSIT, nothing credited, actual unchanged', async () => {
    const shop = await t.addBusiness({ name: 'Follow-up shop', refundFollowUpDeposits: true });
    const p = await btc('0.01', shop);
    expect(p.refundFollowUpDepositsForOneTimePayments).toBe(true);
    await sendBtc(p.paymentId, '0.01', shop);
    expect((await settled(p.paymentId, 1, shop)).status).toBe('DEPOSITED');
    const late = await sendBtc(p.paymentId, '0.003', shop);
    const r = await settled(p.paymentId, 2, shop);
    expect(r.status).toBe('DEPOSITED');
    const d = depositOf(r, late.transactionId);
    expect(d).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.003', displayAmount: '180.00', displayServiceFee: '0.00', displayPayableAmount: '0.00' });
    expect(d.refund).toMatchObject({
      type: 'FULL', status: 'CONFIRMED', reason: 'FOLLOW_UP_DEPOSIT', depositCurrency: 'BTC', network: 'BTC',
      amount: '0.003', fee: '0.00002', displayCurrency: 'EUR', displayAmount: '180.00', displayFee: '1.20',
    });
    expectConfirmedRefund(t, d, BTC_TX);
    expect(r.actualDepositAmount).toBe('0.01');
    expect(r.actualDisplayAmount).toBe('600.00');
  });
});

describe('deposits Kassa cannot take', () => {
  it('currency mismatch: ETH to a USDT/ETH payment → UNPROCESSABLE, FULL CURRENCY_MISMATCH refund; then USDT → DEPOSITED', async () => {
    const p = await pay({ depositCurrency: 'USDT', depositAmount: '100', network: 'ETH' });
    expect(p.expectedDepositAmount).toBe('100');
    const wrong = await send(p.paymentId, { depositCurrency: 'ETH', network: 'ETH', amount: '0.01' });
    expect(wrong.deposit?.status).toBe('UNPROCESSABLE');
    const r1 = await settled(p.paymentId, 1);
    expect(r1.status).toBe('UNPROCESSABLE');
    const d1 = depositOf(r1, wrong.transactionId);
    // 0.01 ETH × 3000 = 30.00 EUR, nothing credited; network fee 0.0004 ETH × 3000 = 1.20 EUR
    expect(d1).toMatchObject({ status: 'UNPROCESSABLE', depositCurrency: 'ETH', depositAmount: '0.01', displayAmount: '30.00', displayPayableAmount: '0.00', displayServiceFee: '0.00' });
    expect(d1.refund).toMatchObject({
      type: 'FULL', status: 'CONFIRMED', reason: 'CURRENCY_MISMATCH', depositCurrency: 'ETH', network: 'ETH',
      amount: '0.01', fee: '0.0004', displayCurrency: 'EUR', displayAmount: '30.00', displayFee: '1.20',
    });
    expectConfirmedRefund(t, d1, ETH_TX);
    expect(r1.actualDepositAmount).toBe('0');
    expect(r1.actualDisplayAmount).toBe('0.00');

    const right = await send(p.paymentId, { depositCurrency: 'USDT', network: 'ETH', amount: '100' });
    const r2 = await settled(p.paymentId, 2);
    expect(r2.status).toBe('DEPOSITED');
    // 100 USDT at the locked peg rate 0.92 EUR = 92.00; fee 0.92; payable 91.08
    expect(depositOf(r2, right.transactionId)).toMatchObject({
      status: 'CONFIRMED', depositCurrency: 'USDT', depositAmount: '100', displayAmount: '92.00', displayServiceFee: '0.92', displayPayableAmount: '91.08',
      // A token's sender pays gas in ETH, none in USDT (as live reports it); the ETH sent by mistake paid its fee in ETH.
      onChainFee: '0',
    });
    expect(depositOf(r2, wrong.transactionId).onChainFee).not.toBe('0');
    expect(depositOf(r2, right.transactionId).refund).toBeUndefined();
    expect(depositOf(r2, wrong.transactionId).status).toBe('UNPROCESSABLE');
    expect(r2.actualDepositAmount).toBe('100');
    expect(r2.actualDisplayAmount).toBe('92.00');
  });

  it('another network: USDT on BSC to a USDT/ETH payment (one address on both) → UNPROCESSABLE, FULL CURRENCY_MISMATCH refund on BSC', async () => {
    const p = await pay({ depositCurrency: 'USDT', depositAmount: '100', network: 'ETH' });
    const wrong = await send(p.paymentId, { depositCurrency: 'USDT', network: 'BSC', amount: '100' });
    // Before, the deposit was looked for on ETH only: "deposit": null, nothing recorded, nothing refunded.
    expect(wrong.deposit?.status).toBe('UNPROCESSABLE');
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('UNPROCESSABLE');
    const d = depositOf(r, wrong.transactionId);
    expect(d).toMatchObject({ status: 'UNPROCESSABLE', depositCurrency: 'USDT', network: 'BSC', depositAmount: '100', displayPayableAmount: '0.00' });
    expect(d.refund).toMatchObject({ type: 'FULL', status: 'CONFIRMED', reason: 'CURRENCY_MISMATCH', depositCurrency: 'USDT', network: 'BSC', amount: '100' });
    expectConfirmedRefund(t, d, ETH_TX);
    expect(r.actualDepositAmount).toBe('0');
  });

  it('a network the address cannot be on: ETH on ETH to a BTC payment is refused by the sandbox (422 ADDRESS_NOT_ON_NETWORK)', async () => {
    const p = await btc('0.01');
    const res = await t.signed('POST', `/v1/test-helpers/payments/${p.paymentId}/deposits`, { depositCurrency: 'ETH', network: 'ETH', amount: '0.01' });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ code: 'ADDRESS_NOT_ON_NETWORK' });
    expect(res.json().detail).toContain('it can on BCH, BTC, LTC');
    expect((await read(p.paymentId)).deposits).toEqual([]);
  });

  it('restricted currency: OMG on ETH to an ETH payment → UNPROCESSABLE, FULL RESTRICTED_CURRENCY refund', async () => {
    const p = await pay({ depositCurrency: 'ETH', depositAmount: '0.1', network: 'ETH' });
    const s = await send(p.paymentId, { depositCurrency: 'OMG', network: 'ETH', amount: '10' });
    expect(s.deposit?.status).toBe('UNPROCESSABLE');
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('UNPROCESSABLE');
    const d = depositOf(r, s.transactionId);
    // 10 OMG × 0.5 EUR = 5.00 EUR; a delisted token is returned at 1 unit (0.50 EUR)
    expect(d).toMatchObject({ status: 'UNPROCESSABLE', depositCurrency: 'OMG', depositAmount: '10', displayAmount: '5.00', displayPayableAmount: '0.00' });
    expect(d.refund).toMatchObject({
      type: 'FULL', status: 'CONFIRMED', reason: 'RESTRICTED_CURRENCY', depositCurrency: 'OMG', network: 'ETH',
      amount: '10', fee: '1', displayCurrency: 'EUR', displayAmount: '5.00', displayFee: '0.50',
    });
    expectConfirmedRefund(t, d, ETH_TX);
    expect(r.actualDepositAmount).toBe('0');
  });

  it('a refund not above the network fee is NON_REFUNDABLE; one just above is sent', async () => {
    const p = await pay({ depositCurrency: 'ETH', depositAmount: '0.1', network: 'ETH' });
    // USDT on ETH costs 1.5 USDT to send back (NETWORK_FEES): 1.5 is not refundable, 1.500001 is
    const atFee = await send(p.paymentId, { depositCurrency: 'USDT', network: 'ETH', amount: '1.5' });
    const above = await send(p.paymentId, { depositCurrency: 'USDT', network: 'ETH', amount: '1.500001' });
    const r = await settled(p.paymentId, 2);
    expect(r.status).toBe('UNPROCESSABLE');
    // 1.5 USDT at the peg × 0.92 = 1.38 EUR
    expect(depositOf(r, atFee.transactionId).refund).toEqual({
      type: 'FULL', status: 'NON_REFUNDABLE', reason: 'CURRENCY_MISMATCH', depositCurrency: 'USDT', network: 'ETH',
      amount: '1.5', fee: '1.5', displayCurrency: 'EUR', displayAmount: '1.38', displayFee: '1.38',
    });
    const sent = depositOf(r, above.transactionId);
    expect(sent.refund).toMatchObject({ type: 'FULL', status: 'CONFIRMED', reason: 'CURRENCY_MISMATCH', amount: '1.500001', fee: '1.5' });
    expectConfirmedRefund(t, sent, ETH_TX);
  });
});

describe('stablecoin depeg loss on deposits', () => {
  it('FLOATING (REUSABLE) USDT payment: 100 USDT valued at the peg reports the loss against market', async () => {
    const p = await pay({ type: 'REUSABLE', depositCurrency: 'USDT', depositAmount: '100', network: 'TRX' });
    const s = await send(p.paymentId, { depositCurrency: 'USDT', network: 'TRX', amount: '100' });
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('DEPOSITED');
    // peg 0.92 EUR vs market 0.9195 EUR: 100 × 0.0005 = 0.05 EUR (settlement is EUR too)
    expect(depositOf(r, s.transactionId)).toMatchObject({
      displayAmount: '92.00', displayPayableAmount: '91.08',
      displayRateDepegLossAmount: '0.05', settlementRateDepegLossAmount: '0.05', uniformRateDepegLossAmount: '0.05',
    });
  });

  it('FIXED USDT payment: the deposit is valued at the locked peg rate, so it reports the depeg loss too (CONTRACT §5)', async () => {
    const p = await pay({ depositCurrency: 'USDT', depositAmount: '100', network: 'TRX' });
    expect(p.rateType).toBe('FIXED');
    const s = await send(p.paymentId, { depositCurrency: 'USDT', network: 'TRX', amount: '100' });
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('DEPOSITED');
    const d = depositOf(r, s.transactionId);
    expect(d.displayAmount).toBe('92.00');
    // valued at the peg (0.92 EUR) while the market is 0.9195: 100 × 0.0005 = 0.05 EUR
    expect({
      display: d.displayRateDepegLossAmount, settlement: d.settlementRateDepegLossAmount, uniform: d.uniformRateDepegLossAmount,
    }).toEqual({ display: '0.05', settlement: '0.05', uniform: '0.05' });
  });
});

describe('compliance', () => {
  let admin: Operator;
  let viewer: Operator;
  beforeAll(async () => {
    admin = await adminOf(t);
    const v = await createOperator(t.db.db, 'vic', 'viewer');
    viewer = { id: v.operatorId, name: 'vic', role: 'viewer' };
  });

  /** A 0.01 BTC deposit with risk `score` to a fresh 0.01 payment, waited until the chain has confirmed it. */
  async function reviewed(score: string) {
    const p = await btc('0.01');
    const s = await sendBtc(p.paymentId, '0.01', t.business, { riskScore: score });
    expect(s.deposit?.status).toBe('COMPLIANCE_REVIEW');
    const depositId = s.deposit!.id;
    await eventually(async () => (await chainStatus(t, depositId)) === 'CONFIRMED', 15_000, 'chain confirmation');
    return { p, s, depositId };
  }

  it('risk 6 (between review 5 and block 8): COMPLIANCE_REVIEW, payment AWAITING; approved → CONFIRMED, DEPOSITED', async () => {
    const { p, s, depositId } = await reviewed('6');
    const before = await read(p.paymentId);
    expect(before.status).toBe('AWAITING');
    const held = depositOf(before, s.transactionId);
    expect(held).toMatchObject({ status: 'COMPLIANCE_REVIEW', riskScore: '6', displayAmount: '600.00', displayPayableAmount: '0.00' });
    expect(held.addressRiskAssessment?.addressOwner?.category).toBe('high_risk_exchange');
    expect(before.actualDepositAmount).toBe('0');

    // a viewer cannot decide
    await expect(caller(t, viewer).deposits.decide({ depositId, decision: 'APPROVE' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(depositOf(await read(p.paymentId), s.transactionId).status).toBe('COMPLIANCE_REVIEW');

    expect(await caller(t, admin).deposits.decide({ depositId, decision: 'APPROVE' })).toEqual({ status: 'CONFIRMED' });
    const after = await read(p.paymentId);
    expect(after.status).toBe('DEPOSITED');
    expect(depositOf(after, s.transactionId)).toMatchObject({ status: 'CONFIRMED', displayServiceFee: '6.00', displayPayableAmount: '594.00' });
    expect(after.actualDepositAmount).toBe('0.01');

    // deciding again: CONFLICT, nothing changes
    await expect(caller(t, admin).deposits.decide({ depositId, decision: 'REJECT' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await read(p.paymentId)).status).toBe('DEPOSITED');
  });

  it('rejected → deposit BLOCKED, FULL ILLICIT_DEPOSIT refund NON_REFUNDABLE, payment BLOCKED; deciding twice → CONFLICT', async () => {
    const { p, s, depositId } = await reviewed('7.9');
    expect(await caller(t, admin).deposits.decide({ depositId, decision: 'REJECT' })).toEqual({ status: 'BLOCKED' });
    const r = await read(p.paymentId);
    expect(r.status).toBe('BLOCKED');
    const d = depositOf(r, s.transactionId);
    expect(d.status).toBe('BLOCKED');
    // 0.01 BTC = 600.00 EUR frozen; fee 0.00002 BTC = 1.20 EUR
    expect(d.refund).toEqual({
      type: 'FULL', status: 'NON_REFUNDABLE', reason: 'ILLICIT_DEPOSIT', depositCurrency: 'BTC', network: 'BTC',
      amount: '0.01', fee: '0.00002', displayCurrency: 'EUR', displayAmount: '600.00', displayFee: '1.20',
    });
    expect(r.actualDepositAmount).toBe('0');
    await expect(caller(t, admin).deposits.decide({ depositId, decision: 'APPROVE' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(caller(t, admin).deposits.decide({ depositId, decision: 'REJECT' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await read(p.paymentId)).status).toBe('BLOCKED');
  });

  it('risk 9 (at or above block 8) → BLOCKED at once, FULL ILLICIT_DEPOSIT NON_REFUNDABLE', async () => {
    const p = await btc('0.01');
    const s = await sendBtc(p.paymentId, '0.01', t.business, { riskScore: '9' });
    expect(s.deposit?.status).toBe('BLOCKED');
    expect(s.payment.status).toBe('BLOCKED');
    await eventually(async () => (await chainStatus(t, s.deposit!.id)) === 'CONFIRMED', 15_000, 'chain confirmation');
    const r = await read(p.paymentId);
    expect(r.status).toBe('BLOCKED');
    const d = depositOf(r, s.transactionId);
    expect(d).toMatchObject({ status: 'BLOCKED', riskScore: '9', displayPayableAmount: '0.00' });
    expect(d.addressRiskAssessment?.addressOwner?.category).toBe('sanctions');
    expect(d.refund).toMatchObject({ type: 'FULL', status: 'NON_REFUNDABLE', reason: 'ILLICIT_DEPOSIT', amount: '0.01' });
    expect(d.refund?.transactionId).toBeUndefined();
    expect(r.actualDepositAmount).toBe('0');
  });

  it('thresholds are inclusive: 4.9 passes, 5 is reviewed, 8 and 10 are blocked', async () => {
    const status = async (score: string) => (await sendBtc((await btc('0.01')).paymentId, '0.01', t.business, { riskScore: score })).deposit?.status;
    // not held: UNCONFIRMED, or already CONFIRMED when the sandbox block beat the helper's own report
    expect(['UNCONFIRMED', 'CONFIRMED']).toContain(await status('4.9'));
    expect(await status('5')).toBe('COMPLIANCE_REVIEW');
    expect(await status('7.9')).toBe('COMPLIANCE_REVIEW');
    expect(await status('8')).toBe('BLOCKED');
    expect(await status('10')).toBe('BLOCKED');
  });

  it("the business's own thresholds apply (review 3, block 4)", async () => {
    const strict = await t.addBusiness({ name: 'Strict shop', riskReviewThreshold: '3', riskBlockThreshold: '4' });
    const status = async (score: string) => (await sendBtc((await btc('0.01', strict)).paymentId, '0.01', strict, { riskScore: score })).deposit?.status;
    expect(['UNCONFIRMED', 'CONFIRMED']).toContain(await status('2.9'));
    expect(await status('3')).toBe('COMPLIANCE_REVIEW');
    expect(await status('4')).toBe('BLOCKED');
  });
});

describe('chain failure', () => {
  it('confirm: false → deposit FAILED, payment FAILED; a later good deposit → DEPOSITED', async () => {
    const p = await btc('0.01');
    const dropped = await sendBtc(p.paymentId, '0.01', t.business, { confirm: false });
    const r1 = await settled(p.paymentId, 1);
    expect(r1.status).toBe('FAILED');
    const d = depositOf(r1, dropped.transactionId);
    expect(d).toMatchObject({ status: 'FAILED', depositAmount: '0.01', displayPayableAmount: '0.00' });
    expect(d.refund).toBeUndefined();
    expect(r1.actualDepositAmount).toBe('0');

    const good = await sendBtc(p.paymentId, '0.01');
    const r2 = await settled(p.paymentId, 2);
    expect(r2.status).toBe('DEPOSITED');
    expect(depositOf(r2, good.transactionId).status).toBe('CONFIRMED');
    expect(depositOf(r2, dropped.transactionId).status).toBe('FAILED');
    expect(r2.actualDepositAmount).toBe('0.01');
  });
});

describe('REUSABLE payments', () => {
  it('three deposits: DEPOSITED after the first, three CONFIRMED deposits, actual = their sum', async () => {
    const p = await btc('0.01', t.business, { type: 'REUSABLE' });
    expect(p).toMatchObject({ type: 'REUSABLE', rateType: 'FLOATING', expirationMinutes: 0 });
    const amounts = ['0.001', '0.002', '0.003'];
    const txs: string[] = [];
    for (const [i, amount] of amounts.entries()) {
      txs.push((await sendBtc(p.paymentId, amount)).transactionId);
      expect((await settled(p.paymentId, i + 1)).status).toBe('DEPOSITED');
    }
    const r = await read(p.paymentId);
    expect(r.status).toBe('DEPOSITED');
    expect(r.deposits).toHaveLength(3);
    // 0.001/0.002/0.003 × 60000 = 60.00/120.00/180.00 EUR
    expect(txs.map((tx) => depositOf(r, tx)).map((d) => [d.status, d.depositAmount, d.displayAmount, d.refund])).toEqual([
      ['CONFIRMED', '0.001', '60.00', undefined],
      ['CONFIRMED', '0.002', '120.00', undefined],
      ['CONFIRMED', '0.003', '180.00', undefined],
    ]);
    expect(r.actualDepositAmount).toBe('0.006');
    expect(r.actualDisplayAmount).toBe('360.00');
    expect(r.actualUniformAmount).toBe('360.00');
  });
});

describe('fiat-priced payments: NEW, then currency chosen', () => {
  it('EUR 600.00 FIXED: NEW; chooseCurrency BTC/BTC → PENDING expecting 0.01; the deposit uses the locked rate', async () => {
    const admin = await adminOf(t, 'chooser');
    const p = await pay({ displayCurrency: 'EUR', displayAmount: '600.00' });
    expect(p).toMatchObject({ status: 'NEW', rateType: 'FIXED', displayCurrency: 'EUR', expectedDisplayAmount: '600.00' });
    expect(p.walletAddress).toBeUndefined();
    expect(p.depositCurrency).toBeUndefined();
    // no address yet: nothing can be sent
    const early = await t.signed('POST', `/v1/test-helpers/payments/${p.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01' });
    expect(early.statusCode).toBe(422);

    const chosen = PaymentRecordSchema.parse(
      await caller(t, admin).payments.chooseCurrency({ paymentId: p.paymentId, depositCurrency: 'BTC', network: 'BTC' }),
    );
    // 600.00 EUR / 60000 = 0.01 BTC
    expect(chosen).toMatchObject({ status: 'PENDING', depositCurrency: 'BTC', expectedNetwork: 'BTC', expectedDepositAmount: '0.01' });
    expect(chosen.walletAddress).toBeTruthy();
    expect(await read(p.paymentId)).toMatchObject({ status: 'PENDING', expectedDepositAmount: '0.01', walletAddress: chosen.walletAddress });
    // the same choice again is a no-op; another one is refused
    expect((await caller(t, admin).payments.chooseCurrency({ paymentId: p.paymentId, depositCurrency: 'BTC', network: 'BTC' })).status).toBe('PENDING');
    await expect(caller(t, admin).payments.chooseCurrency({ paymentId: p.paymentId, depositCurrency: 'ETH', network: 'ETH' }))
      .rejects.toMatchObject({ code: 'CONFLICT' });

    const s = await sendBtc(p.paymentId, '0.01');
    const r = await settled(p.paymentId, 1);
    expect(r.status).toBe('DEPOSITED');
    expect(depositOf(r, s.transactionId)).toMatchObject({ status: 'CONFIRMED', displayAmount: '600.00', displayPayableAmount: '594.00' });
    expect(r.actualDisplayAmount).toBe('600.00');
    const [row] = await rows<{ rate_source: string; rate_display: string }>(
      t.db.sql`select rate_source, rate_display::text from deposits where payment_id = ${p.paymentId}`,
    );
    expect(row!.rate_source).toBe('FIXED');
    expect(new Dec(row!.rate_display).eq(60000)).toBe(true);
  });
});

describe('ingestion is idempotent and serialized', () => {
  it('a replayed deposit report is a REPLAY: one deposit row, ledger and events unchanged', async () => {
    const shop = await t.addBusiness({ name: 'Replay shop' });
    const p = await btc('0.01', shop);
    const report: DepositReport = {
      network: 'BTC', txHash: sandboxTxHash('BTC', randomUUID()), outputIndex: 0,
      fromAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', toAddress: p.walletAddress!,
      currency: 'BTC', amount: '0.01', state: 'CONFIRMED', confirmations: 6, dictatedRiskScore: '1',
    };
    const first = await ingestDeposit(t.deps, report);
    expect(first).toMatchObject({ outcome: 'CREATED', status: 'CONFIRMED', paymentId: p.paymentId });
    const snapshot = async () => ({
      deposits: await rows(t.db.sql`select id, status, credited_amount::text, amounts from deposits where tx_hash = ${report.txHash}`),
      ledger: await rows(t.db.sql`select id, account, currency, amount::text from ledger_entries where business_id = ${shop.businessId} order by id`),
      balances: await getBalances(t.db.db, shop.businessId),
      events: await rows(t.db.sql`select count(*)::int as n from events e join deposits d on e.entity_type = 'deposit' and d.id = e.entity_id where d.tx_hash = ${report.txHash}`),
      paymentEvents: await rows(t.db.sql`select count(*)::int as n from events where entity_type = 'payment' and entity_id = ${p.paymentId}`),
    });
    const before = await snapshot();
    expect(before.deposits).toHaveLength(1);
    expect(before.ledger).toHaveLength(2);
    expect(before.balances.map((b) => [b.account, b.currency, new Dec(b.amount).toFixed()])).toEqual([['FEES', 'EUR', '6'], ['MERCHANT', 'EUR', '594']]);

    const again = await ingestDeposit(t.deps, report);
    expect(again).toEqual({ outcome: 'REPLAY', depositId: (first as { depositId: string }).depositId, status: 'CONFIRMED', paymentId: p.paymentId });
    // an older state (SEEN) after CONFIRMED is a replay too (DROPPED after CONFIRMED is not: see
    // "a credited deposit reorganised away")
    expect((await ingestDeposit(t.deps, { ...report, state: 'SEEN', confirmations: 0 })).outcome).toBe('REPLAY');
    expect(await snapshot()).toEqual(before);
    const r = await read(p.paymentId, shop);
    expect(r.status).toBe('DEPOSITED');
    expect(r.deposits).toHaveLength(1);
    expect(r.actualDepositAmount).toBe('0.01');
  });

  it('two deposits of 0.005 arriving concurrently on a 0.01 payment: both credited, DEPOSITED, actual 0.01', async () => {
    const p = await btc('0.01');
    const [a, b] = await Promise.all([sendBtc(p.paymentId, '0.005'), sendBtc(p.paymentId, '0.005')]);
    const r = await settled(p.paymentId, 2);
    expect(r.status).toBe('DEPOSITED');
    for (const s of [a, b]) {
      expect(depositOf(r, s.transactionId)).toMatchObject({ status: 'CONFIRMED', depositAmount: '0.005', displayAmount: '300.00', displayPayableAmount: '297.00' });
    }
    expect(r.actualDepositAmount).toBe('0.01');
    expect(r.actualDisplayAmount).toBe('600.00');
  });

  it('five concurrent deposits of 0.002: all credited exactly once, DEPOSITED', async () => {
    const p = await btc('0.01');
    const sent = await Promise.all(Array.from({ length: 5 }, () => sendBtc(p.paymentId, '0.002')));
    const r = await settled(p.paymentId, 5);
    expect(r.status).toBe('DEPOSITED');
    expect(sent.map((s) => depositOf(r, s.transactionId).status)).toEqual(Array(5).fill('CONFIRMED'));
    expect(r.actualDepositAmount).toBe('0.01');
    const ledger = await rows<{ n: number }>(t.db.sql`
      select count(*)::int as n from ledger_entries l join deposits d on d.id = l.deposit_id where d.payment_id = ${p.paymentId}`);
    // one MERCHANT and one FEES entry per deposit
    expect(ledger[0]!.n).toBe(10);
  });
});

describe('reading while deposits settle', () => {
  it('GET /v1/payments/:id is one consistent snapshot: never AWAITING while its confirmed deposits cover the amount', async () => {
    // Poll each payment while the worker confirms its single covering deposit. A record whose only
    // deposit is CONFIRMED for the full 0.01 must say DEPOSITED (CONTRACT §5), in every single read.
    const torn: string[] = [];
    let reads = 0;
    for (let i = 0; i < 30; i++) {
      const p = await btc('0.01');
      await sendBtc(p.paymentId, '0.01');
      for (let k = 0; k < 60; k++) {
        const r = await read(p.paymentId);
        reads++;
        const d = r.deposits[0];
        if (d?.status === 'CONFIRMED' && r.status !== 'DEPOSITED') torn.push(`${r.status} with deposit ${d.status}, actual ${r.actualDepositAmount}`);
        if (d?.status === 'UNCONFIRMED' && r.actualDepositAmount !== '0') torn.push(`actual ${r.actualDepositAmount} with deposit UNCONFIRMED`);
        if (r.status === 'DEPOSITED') break;
      }
    }
    expect(reads).toBeGreaterThan(30);
    expect(torn).toEqual([]);
    // 30 payments and up to 1,800 reads: a minute or more when the machine is busy. It checks
    // consistency, not speed, so it gets room (speed lives in npm run bench).
  }, 180_000);
});

describe('ledger', () => {
  const norm = (list: { account: string; currency: string; amount: string }[]) =>
    list.map((b) => ({ account: b.account, currency: b.currency, amount: new Dec(b.amount).toFixed() }));

  it('balances equal the sum of entries; MERCHANT = Σ settlementPayableAmount, FEES = Σ settlementServiceFee (settlement BTC)', async () => {
    const shop = await t.addBusiness({ name: 'BTC-settled shop', settlementCurrency: 'BTC' });
    const p1 = await btc('0.01', shop);
    const s1 = await sendBtc(p1.paymentId, '0.01', shop);
    const p2 = await pay({ depositCurrency: 'USDT', depositAmount: '100', network: 'ETH' }, shop);
    const s2 = await send(p2.paymentId, { depositCurrency: 'USDT', network: 'ETH', amount: '100' }, shop);
    const r1 = await settled(p1.paymentId, 1, shop);
    const r2 = await settled(p2.paymentId, 1, shop);
    const d1 = depositOf(r1, s1.transactionId);
    const d2 = depositOf(r2, s2.transactionId);
    // 0.01 BTC: fee 0.0001, payable 0.0099 BTC
    expect([d1.settlementCurrency, d1.settlementServiceFee, d1.settlementPayableAmount]).toEqual(['BTC', '0.0001', '0.0099']);
    // 100 USDT = 92 EUR = 92/60000 BTC = 0.00153333… : fee 0.00001533, payable 91.08/60000 = 0.001518
    expect([d2.settlementCurrency, d2.settlementServiceFee, d2.settlementPayableAmount]).toEqual(['BTC', '0.00001533', '0.001518']);

    const balances = await getBalances(t.db.db, shop.businessId);
    expect(norm(balances)).toEqual(norm(await sumEntries(t.db.db, shop.businessId)));
    // MERCHANT: 0.0099 + 0.001518 = 0.011418; FEES: 0.0001 + 0.00001533 = 0.00011533
    expect(norm(balances)).toEqual([
      { account: 'FEES', currency: 'BTC', amount: '0.00011533' },
      { account: 'MERCHANT', currency: 'BTC', amount: '0.011418' },
    ]);
  });

  it('for every business: balances = Σ entries, and for the main shop MERCHANT/FEES = Σ of its deposits; no job failed', async () => {
    await eventually(async () => {
      const [row] = await rows<{ n: number }>(t.db.sql`
        select count(*)::int as n from graphile_worker.jobs where task_identifier in ('sandbox_settle_tx', 'broadcast_refund')`);
      return row!.n === 0;
    }, 15_000, 'worker queue drained');
    expect(await rows(t.db.sql`select task_identifier, last_error from graphile_worker.jobs where last_error is not null`)).toEqual([]);

    const businesses = await rows<{ business_id: string }>(t.db.sql`select distinct business_id from ledger_entries`);
    expect(businesses.length).toBeGreaterThanOrEqual(3);
    for (const { business_id } of businesses) {
      expect({ business_id, balances: norm(await getBalances(t.db.db, business_id)) })
        .toEqual({ business_id, balances: norm(await sumEntries(t.db.db, business_id)) });
    }

    const list = await rows<{ amounts: Record<string, string>; settlement_currency: string }>(
      t.db.sql`select amounts, settlement_currency from deposits where business_id = ${t.business.businessId}`,
    );
    expect(list.length).toBeGreaterThan(10);
    const sum = (key: string) => list.reduce((acc, d) => acc.add(d.amounts[key] ?? '0'), new Dec(0)).toFixed();
    expect(norm(await getBalances(t.db.db, t.business.businessId))).toEqual([
      { account: 'FEES', currency: 'EUR', amount: sum('settlementServiceFee') },
      { account: 'MERCHANT', currency: 'EUR', amount: sum('settlementPayableAmount') },
    ]);
  });

  it('the ledger and the event tables are append-only in the database itself', async () => {
    const refused = /append-only/;
    const [entries] = await rows<{ n: number }>(t.db.sql`select count(*)::int as n from ledger_entries`);
    await expect(t.db.sql`update ledger_entries set amount = amount + 1`).rejects.toThrow(refused);
    await expect(t.db.sql`delete from ledger_entries`).rejects.toThrow(refused);
    await expect(t.db.sql`delete from events where entity_type = 'payment'`).rejects.toThrow(refused);
    await expect(t.db.sql`update events set to_status = 'DEPOSITED' where entity_type = 'payment'`).rejects.toThrow(refused);
    await expect(t.db.sql`update events set reason = 'x' where entity_type = 'deposit'`).rejects.toThrow(refused);
    await expect(t.db.sql`delete from events where entity_type = 'refund'`).rejects.toThrow(refused);
    const [after] = await rows<{ n: number }>(t.db.sql`select count(*)::int as n from ledger_entries`);
    expect(after!.n).toBe(entries!.n);
    expect(after!.n).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------
// A second app with no worker: the test drives the chain (settleSandboxTx),
// refund broadcasts and expiry by hand, and moves the clock.
// ---------------------------------------------------------------------------
describe('driven by hand (no worker)', () => {
  let m: TestApp;
  let admin: Operator;
  beforeAll(async () => {
    m = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '3600' } });
    admin = await adminOf(m);
  });
  afterAll(async () => {
    await m?.close();
  });

  const mPay = (body: Record<string, unknown>, who: TestBusiness = m.business) => createIn(m, who, body);
  const mBtc = (amount = '0.01', who: TestBusiness = m.business, extra: Record<string, unknown> = {}) =>
    mPay({ depositCurrency: 'BTC', depositAmount: amount, network: 'BTC', ...extra }, who);
  const mSend = (paymentId: string, amount: string, who: TestBusiness = m.business, extra: Record<string, unknown> = {}) =>
    simulateIn(m, who, paymentId, { depositCurrency: 'BTC', network: 'BTC', amount, ...extra });
  const mRead = (paymentId: string, who: TestBusiness = m.business) => getIn(m, who, paymentId);
  /** The sandbox chain's block: confirm (or drop) the simulated transaction now. */
  async function mine(txHash: string) {
    const [row] = await rows<{ id: string }>(m.db.sql`select id from sandbox_transactions where tx_hash = ${txHash}`);
    return settleSandboxTx(m.deps, row!.id);
  }
  async function jobsFor(paymentId: string) {
    return rows<{ task_identifier: string; run_at: Date; key: string | null }>(m.db.sql`
      select t.identifier as task_identifier, j.run_at, j.key
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where j.payload->>'paymentId' = ${paymentId}`);
  }

  describe("the chain's block before the request's own report", () => {
    // The settle job can run before the request that created the transaction reports it (its run
    // time already past on a busy machine): the deposit must still be born UNCONFIRMED.
    it.each([
      [true, 'CONFIRMED', ['PENDING', 'AWAITING', 'DEPOSITED']],
      [false, 'FAILED', ['PENDING', 'AWAITING', 'FAILED']],
    ] as const)('will confirm: %s → deposit %s, recorded through UNCONFIRMED', async (willConfirm, final, paymentPath) => {
      const p = await mBtc('0.01');
      const [pay] = await rows<{ wallet_address: string }>(m.db.sql`select wallet_address from payments where id = ${p.paymentId}`);
      const txHash = sandboxTxHash('BTC', randomUUID());
      await m.db.sql`insert into sandbox_transactions (network, tx_hash, from_address, to_address, currency, amount, status, will_confirm)
        values ('BTC', ${txHash}, 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', ${pay!.wallet_address}, 'BTC', '0.01', 'SEEN', ${willConfirm})`;
      await mine(txHash);
      const r = await mRead(p.paymentId);
      const d = depositOf(r, txHash);
      expect(d.status).toBe(final);
      const depositPath = await rows<{ to_status: string }>(m.db.sql`
        select e.to_status from events e join deposits d on e.entity_type = 'deposit' and d.id = e.entity_id where d.tx_hash = ${txHash} order by e.id`);
      expect(depositPath.map((e) => e.to_status)).toEqual(['UNCONFIRMED', final]);
      const payment = await rows<{ to_status: string }>(m.db.sql`select to_status from events where entity_type = 'payment' and entity_id = ${p.paymentId} order by id`);
      expect(payment.map((e) => e.to_status)).toEqual(paymentPath);
    });
  });

  describe('expiry', () => {
    it('a ONE_TIME payment gets exactly one expire_payment job at its expiry, from the sweep two minutes ahead; past it, it expires', async () => {
      const createdAt = m.clock.now();
      const p = await mBtc('0.01');
      expect(p.expirationMinutes).toBe(30);
      const expiresAt = new Date(createdAt.getTime() + 30 * 60_000);
      // Creating enqueues nothing: the expiry is the row's expires_at, scheduled by the sweep.
      expect(await jobsFor(p.paymentId)).toEqual([]);
      await scheduleExpiries(m.deps);
      expect(await jobsFor(p.paymentId)).toEqual([]);
      m.clock.advance(30 * 60_000 - EXPIRY_LOOKAHEAD_MS - 1);
      await scheduleExpiries(m.deps);
      expect(await jobsFor(p.paymentId)).toEqual([]);
      m.clock.advance(1);
      await scheduleExpiries(m.deps);
      const jobs = await jobsFor(p.paymentId);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.task_identifier).toBe('expire_payment');
      expect(jobs[0]!.key).toBe(`expire_payment:${p.paymentId}`);
      expect(new Date(jobs[0]!.run_at).getTime()).toBe(expiresAt.getTime());
      // A second sweep adds no second job; the public view agrees.
      expect(await scheduleExpiries(m.deps)).toBe(0);
      const viaView = await rows<{ task_identifier: string; run_at: Date }>(
        m.db.sql`select task_identifier, run_at from graphile_worker.jobs where key = ${`expire_payment:${p.paymentId}`}`,
      );
      expect(viaView.map((j) => [j.task_identifier, new Date(j.run_at).getTime()])).toEqual([['expire_payment', expiresAt.getTime()]]);

      expect(await expirePayment(m.deps, p.paymentId)).toBe('NOT_DUE');
      m.clock.current = new Date(expiresAt.getTime() - 1);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('NOT_DUE');
      expect((await mRead(p.paymentId)).status).toBe('PENDING');
      m.clock.advance(1);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('EXPIRED');
      expect((await mRead(p.paymentId)).status).toBe('EXPIRED');
      // a late or repeated job is harmless
      expect(await expirePayment(m.deps, p.paymentId)).toBe('EXPIRED');
      const events = await rows<{ from_status: string | null; to_status: string }>(
        m.db.sql`select from_status, to_status from events where entity_type = 'payment' and entity_id = ${p.paymentId} order by id`,
      );
      expect(events.map((e) => `${e.from_status ?? '(new)'}→${e.to_status}`)).toEqual(['(new)→PENDING', 'PENDING→EXPIRED']);
    });

    it('a sweep that finds a payment already overdue schedules its job at the past expiry (it runs at once)', async () => {
      const createdAt = m.clock.now();
      const p = await mBtc('0.01');
      m.clock.advance(45 * 60_000);
      await scheduleExpiries(m.deps);
      expect((await jobsFor(p.paymentId)).map((j) => new Date(j.run_at).getTime())).toEqual([createdAt.getTime() + 30 * 60_000]);
    });

    it('a job held by a dead worker (locked for over 5 minutes) or out of attempts is replaced; a live one is not', async () => {
      const p = await mBtc('0.01');
      m.clock.advance(29 * 60_000);
      expect(await scheduleExpiries(m.deps)).toBeGreaterThanOrEqual(1);
      const key = `expire_payment:${p.paymentId}`;
      const jobs = () => rows<{ id: string; key: string | null }>(m.db.sql`select id, key from graphile_worker._private_jobs where payload->>'paymentId' = ${p.paymentId} order by id`);
      const [first] = await jobs();
      // A worker takes it and dies: locked 4 minutes ago, still live; 6 minutes ago, stale.
      await m.db.sql`update graphile_worker._private_jobs set locked_at = now() - interval '4 minutes', locked_by = 'dead' where key = ${key}`;
      await scheduleExpiries(m.deps);
      expect((await jobs()).map((j) => j.id)).toEqual([first!.id]);
      await m.db.sql`update graphile_worker._private_jobs set locked_at = now() - interval '6 minutes' where key = ${key}`;
      await scheduleExpiries(m.deps);
      const after = await jobs();
      expect(after).toHaveLength(2);
      expect(after.find((j) => j.key === key)!.id).not.toBe(first!.id);
      // Out of attempts (failed 25 times): revived under the same key.
      await m.db.sql`delete from graphile_worker._private_jobs where payload->>'paymentId' = ${p.paymentId} and key is null`;
      await m.db.sql`update graphile_worker._private_jobs set locked_at = null, locked_by = null, attempts = max_attempts where key = ${key}`;
      await scheduleExpiries(m.deps);
      expect(await rows<{ attempts: number }>(m.db.sql`select attempts from graphile_worker.jobs where key = ${key}`)).toEqual([{ attempts: 0 }]);
    });

    it('schedules in batches until none is left', async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await mBtc('0.01')).paymentId);
      m.clock.advance(30 * 60_000);
      expect(await scheduleExpiries(m.deps, EXPIRY_LOOKAHEAD_MS, 2)).toBeGreaterThanOrEqual(5);
      for (const id of ids) expect((await jobsFor(id)).map((j) => j.task_identifier)).toEqual(['expire_payment']);
    });

    it('expirationMinutes 0 means 7 days (10080), and the job is scheduled for then', async () => {
      const createdAt = m.clock.now();
      const p = await mBtc('0.01', m.business, { expirationMinutes: 0 });
      expect(p.expirationMinutes).toBe(10080);
      m.clock.advance(10080 * 60_000 - 60_000);
      await scheduleExpiries(m.deps);
      const jobs = await jobsFor(p.paymentId);
      expect(jobs.map((j) => [j.task_identifier, new Date(j.run_at).getTime()])).toEqual([
        ['expire_payment', createdAt.getTime() + 10080 * 60_000],
      ]);
    });

    it('a REUSABLE payment gets no expiry job and never expires', async () => {
      const p = await mBtc('0.01', m.business, { type: 'REUSABLE' });
      expect(p.expirationMinutes).toBe(0);
      m.clock.advance(365 * 24 * 3600_000);
      await scheduleExpiries(m.deps);
      expect(await jobsFor(p.paymentId)).toEqual([]);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('NOT_DUE');
      expect((await mRead(p.paymentId)).status).toBe('PENDING');
    });

    it('payments expire from exactly the statuses the state table lets move to EXPIRED (the sweep index repeats them)', () => {
      expect(EXPIRABLE_PAYMENT_STATUSES).toEqual(['NEW', 'PENDING', 'AWAITING', 'UNPROCESSABLE', 'FAILED']);
    });

    it('an UNCONFIRMED deposit at expiry keeps the payment AWAITING; once it confirms and covers: DEPOSITED', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.01');
      expect(s.deposit?.status).toBe('UNCONFIRMED');
      expect(s.payment.status).toBe('AWAITING');
      m.clock.advance(31 * 60_000);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('AWAITING');
      expect((await mRead(p.paymentId)).status).toBe('AWAITING');
      await mine(s.transactionId);
      const r = await mRead(p.paymentId);
      expect(r.status).toBe('DEPOSITED');
      // received before expiry: valued at the locked rate
      expect(depositOf(r, s.transactionId)).toMatchObject({ status: 'CONFIRMED', displayAmount: '600.00', displayPayableAmount: '594.00' });
    });

    it('an UNCONFIRMED deposit at expiry that is then dropped: EXPIRED', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.01', m.business, { confirm: false });
      m.clock.advance(31 * 60_000);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('AWAITING');
      await mine(s.transactionId);
      const r = await mRead(p.paymentId);
      expect(depositOf(r, s.transactionId).status).toBe('FAILED');
      expect(r.status).toBe('EXPIRED');
    });

    it('a confirmed partial deposit stays credited when the payment expires; a later deposit leaves it EXPIRED', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.004');
      await mine(s.transactionId);
      expect((await mRead(p.paymentId)).status).toBe('AWAITING');
      m.clock.advance(30 * 60_000);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('EXPIRED');
      const r = await mRead(p.paymentId);
      expect(r.status).toBe('EXPIRED');
      expect(r.actualDepositAmount).toBe('0.004');
      expect(depositOf(r, s.transactionId)).toMatchObject({ status: 'CONFIRMED', displayPayableAmount: '237.60' });

      const late = await mSend(p.paymentId, '0.006');
      await mine(late.transactionId);
      const after = await mRead(p.paymentId);
      expect(after.status).toBe('EXPIRED');
      expect(depositOf(after, late.transactionId).status).toBe('CONFIRMED');
    });
  });

  describe('chain failure, block by block', () => {
    it('a deposit dropped by the chain → FAILED, payment FAILED; then a good one → AWAITING → DEPOSITED', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.01', m.business, { confirm: false });
      expect([s.deposit?.status, s.payment.status]).toEqual(['UNCONFIRMED', 'AWAITING']);
      expect(await mine(s.transactionId)).toMatchObject({ outcome: 'UPDATED', status: 'FAILED' });
      const r1 = await mRead(p.paymentId);
      expect(r1.status).toBe('FAILED');
      expect(depositOf(r1, s.transactionId)).toMatchObject({ status: 'FAILED', displayPayableAmount: '0.00' });
      expect(depositOf(r1, s.transactionId).refund).toBeUndefined();
      expect(r1.actualDepositAmount).toBe('0');
      const good = await mSend(p.paymentId, '0.01');
      expect(good.payment.status).toBe('AWAITING');
      await mine(good.transactionId);
      const r2 = await mRead(p.paymentId);
      expect(r2.status).toBe('DEPOSITED');
      expect(r2.actualDepositAmount).toBe('0.01');
    });
  });

  describe('a refund is sent only once its deposit is confirmed on chain', () => {
    // ETH to a USDT/ETH payment is refunded as soon as it is seen: sending that back before the chain
    // confirms it would let the sender double-spend the deposit and keep the refund.
    async function mismatched(confirm: boolean) {
      const p = await mPay({ depositCurrency: 'USDT', depositAmount: '100', network: 'ETH' });
      const s = await simulateIn(m, m.business, p.paymentId, { depositCurrency: 'ETH', network: 'ETH', amount: '0.01', confirm });
      expect(s.deposit?.status).toBe('UNPROCESSABLE');
      expect(s.deposit?.refund?.status).toBe('PENDING');
      const [refund] = await rows<{ id: string }>(m.db.sql`select id from refunds where deposit_id = ${s.deposit!.id}`);
      const jobs = async () => (await rows<{ n: number }>(m.db.sql`
        select count(*)::int as n from graphile_worker.jobs where key = ${`broadcast_refund:${refund!.id}`}`))[0]!.n;
      return { p, s, refundId: refund!.id, jobs };
    }
    const refundEvents = async (refundId: string) =>
      (await rows<{ to_status: string; reason: string }>(m.db.sql`
        select to_status, reason from events where entity_type = 'refund' and entity_id = ${refundId} order by id`)).map((e) => [e.to_status, e.reason]);

    it('seen: PENDING with no broadcast job, and a job run anyway sends nothing; confirmed: the job is enqueued and sends it', async () => {
      const { p, s, refundId, jobs } = await mismatched(true);
      expect(await jobs()).toBe(0);
      expect(await broadcastRefund(m.deps, m.deps.chains, refundId)).toBe('WAITING_FOR_DEPOSIT');
      const [unsent] = await rows<{ status: string; sending_since: Date | null; transaction_id: string | null }>(m.db.sql`
        select status, sending_since, transaction_id from refunds where id = ${refundId}`);
      expect(unsent).toEqual({ status: 'PENDING', sending_since: null, transaction_id: null });
      await mine(s.transactionId);
      expect(await jobs()).toBe(1);
      expect(await broadcastRefund(m.deps, m.deps.chains, refundId)).toBe('CONFIRMED');
      expect(depositOf(await mRead(p.paymentId), s.transactionId).refund).toMatchObject({ status: 'CONFIRMED', transactionId: expect.stringMatching(ETH_TX) });
    });

    it('dropped before it confirmed: the refund is NON_REFUNDABLE and never sent', async () => {
      const { p, s, refundId, jobs } = await mismatched(false);
      expect(await mine(s.transactionId)).toMatchObject({ outcome: 'UPDATED', status: 'UNPROCESSABLE' });
      expect(await jobs()).toBe(0);
      expect(await broadcastRefund(m.deps, m.deps.chains, refundId)).toBe('NON_REFUNDABLE');
      const refund = depositOf(await mRead(p.paymentId), s.transactionId).refund;
      expect(refund?.status).toBe('NON_REFUNDABLE');
      expect(refund?.transactionId).toBeUndefined();
      expect(await refundEvents(refundId)).toEqual([
        ['PENDING', 'CURRENCY_MISMATCH'],
        ['NON_REFUNDABLE', 'its deposit left the chain before the refund was sent'],
      ]);
    });

    it('dropped, then mined again: the refund its leaving cancelled is PENDING again and sent once', async () => {
      const { p, s, refundId, jobs } = await mismatched(false);
      expect(await mine(s.transactionId)).toMatchObject({ status: 'UNPROCESSABLE' });
      const [d] = await rows<{ network: string; tx_hash: string; output_index: number; from_address: string; to_address: string }>(m.db.sql`
        select network, tx_hash, output_index, from_address, to_address from deposits where id = ${s.deposit!.id}`);
      const report: DepositReport = {
        network: 'ETH', txHash: d!.tx_hash, outputIndex: d!.output_index, fromAddress: d!.from_address, toAddress: d!.to_address,
        currency: 'ETH', amount: '0.01', state: 'CONFIRMED', confirmations: 12,
      };
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'UNPROCESSABLE' });
      // the deposit's one refund, PENDING again and queued, since the deposit is confirmed
      const [again] = await rows<{ id: string; status: string; reason: string; amount: string }>(m.db.sql`
        select id, status, reason, amount::text from refunds where deposit_id = ${s.deposit!.id}`);
      expect([again!.id, again!.status, again!.reason, new Dec(again!.amount).toFixed()]).toEqual([refundId, 'PENDING', 'CURRENCY_MISMATCH', '0.01']);
      expect(await jobs()).toBe(1);
      expect(await refundEvents(refundId)).toEqual([
        ['PENDING', 'CURRENCY_MISMATCH'],
        ['NON_REFUNDABLE', 'its deposit left the chain before the refund was sent'],
        ['PENDING', 'its deposit is back on the chain'],
      ]);
      expect(await broadcastRefund(m.deps, m.deps.chains, refundId)).toBe('CONFIRMED');
      expect(depositOf(await mRead(p.paymentId), s.transactionId)).toMatchObject({ status: 'UNPROCESSABLE', refund: { status: 'CONFIRMED' } });
      // gone and back once more: the refund was sent, nothing is sent twice
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      await ingestDeposit(m.deps, report);
      const [still] = await rows<{ status: string }>(m.db.sql`select status from refunds where deposit_id = ${s.deposit!.id}`);
      expect(still!.status).toBe('CONFIRMED');
      expect((await refundEvents(refundId)).length).toBe(4);
    });

    it('dropped, then mined again after its sender was listed: BLOCKED, and the cancelled refund becomes the frozen one, never sent', async () => {
      const { p, s, refundId, jobs } = await mismatched(false);
      await mine(s.transactionId);
      const [d] = await rows<{ tx_hash: string; output_index: number; from_address: string; to_address: string }>(m.db.sql`
        select tx_hash, output_index, from_address, to_address from deposits where id = ${s.deposit!.id}`);
      expect(await ingestDeposit(m.deps, {
        network: 'ETH', txHash: d!.tx_hash, outputIndex: d!.output_index, fromAddress: d!.from_address, toAddress: d!.to_address,
        currency: 'ETH', amount: '0.01', state: 'CONFIRMED', confirmations: 12, dictatedRiskScore: '9',
      })).toMatchObject({ outcome: 'UPDATED', status: 'BLOCKED' });
      const r = await mRead(p.paymentId);
      expect(r.status).toBe('BLOCKED');
      expect(depositOf(r, s.transactionId)).toMatchObject({ status: 'BLOCKED', riskScore: '9', refund: { type: 'FULL', reason: 'ILLICIT_DEPOSIT', status: 'NON_REFUNDABLE', amount: '0.01' } });
      expect(await refundEvents(refundId)).toEqual([
        ['PENDING', 'CURRENCY_MISMATCH'],
        ['NON_REFUNDABLE', 'its deposit left the chain before the refund was sent'],
        ['NON_REFUNDABLE', 'funds frozen: illicit deposit'],
      ]);
      expect(await jobs()).toBe(0);
    });

    it('claimed by the broadcast job before the deposit left the chain: it is still sent, never cancelled', async () => {
      const { p, s, refundId } = await mismatched(true);
      await mine(s.transactionId);
      // the job's claim, as its first transaction makes it before the node call
      await m.db.sql`update refunds set sending_since = now() where id = ${refundId}`;
      const [tx] = await rows<{ network: string; tx_hash: string; output_index: number; from_address: string; to_address: string }>(m.db.sql`
        select network, tx_hash, output_index, from_address, to_address from deposits where id = ${s.deposit!.id}`);
      const report: DepositReport = {
        network: 'ETH', txHash: tx!.tx_hash, outputIndex: tx!.output_index, fromAddress: tx!.from_address, toAddress: tx!.to_address,
        currency: 'ETH', amount: '0.01', state: 'DROPPED', confirmations: 0,
      };
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED' });
      expect(await broadcastRefund(m.deps, m.deps.chains, refundId)).toBe('CONFIRMED');
      expect(depositOf(await mRead(p.paymentId), s.transactionId).refund?.status).toBe('CONFIRMED');
    });
  });

  describe('a credited deposit reorganised away (CONTRACT §10: a reversing entry, never an edit)', () => {
    const CALLBACK_URL = 'http://127.0.0.1:9/callbacks';
    const reportFor = (walletAddress: string, amount = '0.01'): DepositReport => ({
      network: 'BTC', txHash: sandboxTxHash('BTC', randomUUID()), outputIndex: 0,
      fromAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', toAddress: walletAddress,
      currency: 'BTC', amount, state: 'CONFIRMED', confirmations: 6, dictatedRiskScore: '1',
    });
    const ledgerOf = (businessId: string) => rows<{ account: string; kind: string; amount: string; deposit_id: string }>(m.db.sql`
      select account, kind, amount::text, deposit_id from ledger_entries where business_id = ${businessId} order by id`);
    const balancesOf = async (businessId: string) =>
      (await getBalances(m.db.db, businessId)).map((b) => [b.account, b.currency, new Dec(b.amount).toFixed(2)]);
    const callbackStatuses = async (paymentId: string) =>
      (await rows<{ body: string }>(m.db.sql`select body from callback_deliveries where subject_id = ${paymentId} order by seq`))
        .map((c) => (JSON.parse(c.body) as { status: string }).status);
    /** The deposit's refunds (one at most), amounts as plain decimals. */
    const refundsOf = async (depositId: string) =>
      (await rows<{ id: string; type: string; reason: string; status: string; amount: string }>(m.db.sql`
        select id, type, reason, status, amount::text from refunds where deposit_id = ${depositId}`)).map((x) => ({ ...x, amount: new Dec(x.amount).toFixed() }));
    /** 0.015 BTC to a 0.01 EXCESS_REFUND payment, its 0.005 excess sent back, then the deposit dropped (its credit reversed). */
    async function excessSentThenDropped(name: string) {
      const shop = await m.addBusiness({ name, overpaymentPolicy: 'EXCESS_REFUND' });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!, '0.015');
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      const [excess] = await refundsOf(depositId);
      expect(excess!.amount).toBe('0.005');
      expect(await broadcastRefund(m.deps, m.deps.chains, excess!.id)).toBe('CONFIRMED');
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      return { shop, p, report, depositId };
    }

    it('DEPOSITED → FAILED: the deposit FAILED, the ledger takes back payable and fee, the merchant gets a callback; replays change nothing', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop', paymentCallbackUrl: CALLBACK_URL });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!);
      const credited = await ingestDeposit(m.deps, report);
      expect(credited).toMatchObject({ outcome: 'CREATED', status: 'CONFIRMED' });
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);

      const dropped = await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      expect(dropped).toMatchObject({ outcome: 'UPDATED', status: 'FAILED', paymentId: p.paymentId });
      const depositId = (credited as { depositId: string }).depositId;
      // the credit stays in the ledger; two new entries take it back
      const ledger = await ledgerOf(shop.businessId);
      expect(ledger.map((e) => [e.account, e.kind, new Dec(e.amount).toFixed(2), e.deposit_id])).toEqual([
        ['MERCHANT', 'DEPOSIT', '594.00', depositId],
        ['FEES', 'SERVICE_FEE', '6.00', depositId],
        ['FEES', 'SERVICE_FEE_REVERSAL', '-6.00', depositId],
        ['MERCHANT', 'DEPOSIT_REVERSAL', '-594.00', depositId],
      ]);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
      expect(await sumEntries(m.db.db, shop.businessId)).toEqual((await getBalances(m.db.db, shop.businessId)).map((b) => ({ ...b, amount: expect.any(String) })));

      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('FAILED');
      expect(depositOf(r, report.txHash)).toMatchObject({ status: 'FAILED', displayAmount: '600.00', displayPayableAmount: '0.00' });
      expect(r.actualDepositAmount).toBe('0');
      const depositEvents = await rows<{ to_status: string; reason: string; data: { reversed?: unknown } }>(m.db.sql`
        select to_status, reason, data from events where entity_type = 'deposit' and entity_id = ${depositId} order by id`);
      expect(depositEvents.map((e) => e.to_status)).toEqual(['CONFIRMED', 'FAILED']);
      expect(depositEvents[1]).toMatchObject({
        reason: 'reorganised off the chain after it was credited',
        data: { reversed: [{ account: 'FEES', currency: 'EUR', amount: '-6.00' }, { account: 'MERCHANT', currency: 'EUR', amount: '-594.00' }] },
      });
      const paymentPath = await rows<{ to_status: string }>(m.db.sql`select to_status from events where entity_type = 'payment' and entity_id = ${p.paymentId} order by id`);
      expect(paymentPath.map((e) => e.to_status)).toEqual(['PENDING', 'DEPOSITED', 'FAILED']);
      expect(await callbackStatuses(p.paymentId)).toEqual(['DEPOSITED', 'FAILED']);

      // the same report again changes nothing: never reversed twice
      expect((await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 })).outcome).toBe('REPLAY');
      expect(await ledgerOf(shop.businessId)).toHaveLength(4);
      expect(await callbackStatuses(p.paymentId)).toEqual(['DEPOSITED', 'FAILED']);

      // the payment is open again: a new deposit covers it (not a follow-up)
      const second = await ingestDeposit(m.deps, reportFor(p.walletAddress!));
      expect(second).toMatchObject({ outcome: 'CREATED', status: 'CONFIRMED' });
      const again = await mRead(p.paymentId, shop);
      expect(again.status).toBe('DEPOSITED');
      expect(again.actualDepositAmount).toBe('0.01');
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);
    });

    it('one of two credits taken back: OVERPAID → AWAITING with the rest credited', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 2' });
      const p = await mBtc('0.01', shop);
      const first = reportFor(p.walletAddress!, '0.006');
      await ingestDeposit(m.deps, first);
      await ingestDeposit(m.deps, reportFor(p.walletAddress!, '0.006'));
      expect((await mRead(p.paymentId, shop)).status).toBe('OVERPAID');
      expect(await ingestDeposit(m.deps, { ...first, state: 'DROPPED', confirmations: 0 })).toMatchObject({ status: 'FAILED' });
      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('AWAITING');
      expect(r.actualDepositAmount).toBe('0.006');
      // 0.006 BTC × 60000 = 360.00 EUR: fee 3.60, payable 356.40 left
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '3.60'], ['MERCHANT', 'EUR', '356.40']]);
    });

    const depositPath = async (depositId: string) =>
      (await rows<{ to_status: string; reason: string }>(m.db.sql`
        select to_status, reason from events where entity_type = 'deposit' and entity_id = ${depositId} order by id`)).map((e) => [e.to_status, e.reason]);

    it('mined again after its credit was reversed: seen, then credited once more; the ledger nets to one credit, and a second drop reverses again', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 4', paymentCallbackUrl: CALLBACK_URL });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!);
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      expect((await mRead(p.paymentId, shop)).status).toBe('FAILED');

      // back in a block, not yet deep enough: unconfirmed again, the payment waits for it
      expect(await ingestDeposit(m.deps, { ...report, state: 'SEEN', confirmations: 1 })).toMatchObject({ outcome: 'UPDATED', status: 'UNCONFIRMED' });
      expect((await mRead(p.paymentId, shop)).status).toBe('AWAITING');
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
      // deep enough: credited again, the same amounts as the first time
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('DEPOSITED');
      expect(depositOf(r, report.txHash)).toMatchObject({ status: 'CONFIRMED', displayPayableAmount: '594.00' });
      expect(r.actualDepositAmount).toBe('0.01');
      expect((await ledgerOf(shop.businessId)).map((e) => [e.kind, new Dec(e.amount).toFixed(2)])).toEqual([
        ['DEPOSIT', '594.00'], ['SERVICE_FEE', '6.00'], ['SERVICE_FEE_REVERSAL', '-6.00'], ['DEPOSIT_REVERSAL', '-594.00'], ['DEPOSIT', '594.00'], ['SERVICE_FEE', '6.00'],
      ]);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);
      expect(await depositPath(depositId)).toEqual([
        ['CONFIRMED', expect.any(String)],
        ['FAILED', 'reorganised off the chain after it was credited'],
        ['UNCONFIRMED', 'back on the chain after it was dropped'],
        ['CONFIRMED', 'confirmed on chain'],
      ]);
      expect(await callbackStatuses(p.paymentId)).toEqual(['DEPOSITED', 'FAILED', 'AWAITING', 'DEPOSITED']);
      // a replay credits nothing more
      expect((await ingestDeposit(m.deps, report)).outcome).toBe('REPLAY');
      expect(await ledgerOf(shop.businessId)).toHaveLength(6);

      // gone again: reversed again, once
      expect(await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 })).toMatchObject({ status: 'FAILED' });
      expect(await ledgerOf(shop.businessId)).toHaveLength(8);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
      expect((await mRead(p.paymentId, shop)).status).toBe('FAILED');
    });

    it('mined again straight into a confirmed block: credited at once, as when first seen', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 5' });
      const p = await mBtc('0.01', shop);
      const report = { ...reportFor(p.walletAddress!), state: 'SEEN' as const, confirmations: 1 };
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      // dropped before it was ever credited
      expect(await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 })).toMatchObject({ status: 'FAILED' });
      expect((await mRead(p.paymentId, shop)).status).toBe('FAILED');
      expect(await ingestDeposit(m.deps, { ...report, state: 'CONFIRMED', confirmations: 6 })).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      expect((await mRead(p.paymentId, shop)).status).toBe('DEPOSITED');
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);
      expect((await depositPath(depositId)).map(([status]) => status)).toEqual(['UNCONFIRMED', 'FAILED', 'CONFIRMED']);
    });

    it('an excess already sent back is not sent again when the deposit is credited once more', async () => {
      const { shop, p, report, depositId } = await excessSentThenDropped('Reorg shop 6');
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('DEPOSITED');
      expect(depositOf(r, report.txHash)).toMatchObject({ status: 'CONFIRMED', displayPayableAmount: '594.00' });
      // the one refund, sent once: 0.01 credited + 0.005 returned = the 0.015 received
      expect((await refundsOf(depositId)).map((x) => [x.status, x.amount])).toEqual([['CONFIRMED', '0.005']]);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);
    });

    it('back after another deposit covered the payment: what Kassa still holds of it is credited, its sent excess never sent again', async () => {
      const { shop, p, report, depositId } = await excessSentThenDropped('Reorg shop 7');
      await ingestDeposit(m.deps, reportFor(p.walletAddress!));
      expect((await mRead(p.paymentId, shop)).status).toBe('DEPOSITED');
      // 0.015 received, 0.005 sent back: 0.01 is still Kassa's, and a deposit has one refund, so it is credited
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      const [d] = await rows<{ credited_amount: string }>(m.db.sql`select credited_amount::text from deposits where id = ${depositId}`);
      expect(new Dec(d!.credited_amount).toFixed()).toBe('0.01');
      expect((await refundsOf(depositId)).map((x) => [x.status, x.amount])).toEqual([['CONFIRMED', '0.005']]);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '12.00'], ['MERCHANT', 'EUR', '1188.00']]);
    });

    it('back after another deposit covered the payment, its excess once too small to send: the whole deposit is now the excess, and sent back', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 8', overpaymentPolicy: 'EXCESS_REFUND' });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!, '0.01001');
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      const refundOf = async () => (await refundsOf(depositId)).map((x) => [x.status, x.amount]);
      // 0.00001 over: not above the 0.00002 fee
      expect(await refundOf()).toEqual([['NON_REFUNDABLE', '0.00001']]);
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      await ingestDeposit(m.deps, reportFor(p.walletAddress!));
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      const [d] = await rows<{ credited: boolean }>(m.db.sql`select credited from deposits where id = ${depositId}`);
      expect(d!.credited).toBe(false);
      expect(await refundOf()).toEqual([['PENDING', '0.01001']]);
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '6.00'], ['MERCHANT', 'EUR', '594.00']]);
    });

    it('back after its payment expired: a follow-up like any other (refunded when the business refunds follow-ups), the payment stays EXPIRED', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 9', refundFollowUpDeposits: true });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!);
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      m.clock.advance(31 * 60_000);
      expect(await expirePayment(m.deps, p.paymentId)).toBe('EXPIRED');
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('EXPIRED');
      expect(depositOf(r, report.txHash).refund).toMatchObject({ type: 'FULL', reason: 'FOLLOW_UP_DEPOSIT', status: 'PENDING', amount: '0.01' });
      const [d] = await rows<{ credited: boolean; follow_up: boolean }>(m.db.sql`select credited, follow_up from deposits where id = ${depositId}`);
      expect(d).toEqual({ credited: false, follow_up: true });
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
    });

    it('approved by an operator, credited, reversed, then back: not held for review a second time', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 10' });
      const p = await mBtc('0.01', shop);
      const report = { ...reportFor(p.walletAddress!), dictatedRiskScore: '6' };
      const { depositId } = (await ingestDeposit(m.deps, { ...report, state: 'SEEN', confirmations: 1 })) as { depositId: string };
      expect(await caller(m, admin).deposits.decide({ depositId, decision: 'APPROVE' })).toEqual({ status: 'UNCONFIRMED' });
      await ingestDeposit(m.deps, report);
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      expect((await mRead(p.paymentId, shop)).status).toBe('DEPOSITED');
      expect((await depositPath(depositId)).map(([status]) => status)).toEqual(['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'FAILED', 'CONFIRMED']);
    });

    it('back after its sender was listed meanwhile: screened again, BLOCKED, frozen (an earlier approval does not let it through)', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 11' });
      const p = await mBtc('0.01', shop);
      const report = { ...reportFor(p.walletAddress!), dictatedRiskScore: '6' };
      const { depositId } = (await ingestDeposit(m.deps, { ...report, state: 'SEEN', confirmations: 1 })) as { depositId: string };
      await caller(m, admin).deposits.decide({ depositId, decision: 'APPROVE' });
      await ingestDeposit(m.deps, report);
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      // the screening source now puts the sender at 9 (block threshold 8)
      expect(await ingestDeposit(m.deps, { ...report, dictatedRiskScore: '9' })).toMatchObject({ outcome: 'UPDATED', status: 'BLOCKED' });
      const r = await mRead(p.paymentId, shop);
      expect(r.status).toBe('BLOCKED');
      expect(depositOf(r, report.txHash)).toMatchObject({ status: 'BLOCKED', riskScore: '9', refund: { reason: 'ILLICIT_DEPOSIT', status: 'NON_REFUNDABLE' } });
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
      expect((await depositPath(depositId)).at(-1)).toEqual(['BLOCKED', 'back on the chain after it was dropped']);
    });

    it('back while the screening source cannot answer: judged on its stored screening, credited again, its score kept', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 12' });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!);
      const { depositId } = (await ingestDeposit(m.deps, report)) as { depositId: string };
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      const screening = m.deps.screening;
      m.deps.screening = { screen: async () => { throw new ScreeningUnavailableError('the source is down'); } } as typeof screening;
      try {
        expect(await ingestDeposit(m.deps, report)).toMatchObject({ outcome: 'UPDATED', status: 'CONFIRMED' });
      } finally {
        m.deps.screening = screening;
      }
      const [d] = await rows<{ risk_score: string; credited: boolean }>(m.db.sql`select risk_score::text, credited from deposits where id = ${depositId}`);
      expect([new Dec(d!.risk_score).toFixed(), d!.credited]).toEqual(['1', true]);
      expect((await mRead(p.paymentId, shop)).status).toBe('DEPOSITED');
    });

    it('back with its sender listed, its excess refund never sent: BLOCKED, and that refund becomes the full frozen one', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 13', overpaymentPolicy: 'EXCESS_REFUND' });
      const p = await mBtc('0.01', shop);
      const report = { ...reportFor(p.walletAddress!, '0.015'), state: 'SEEN' as const, confirmations: 1 };
      // confirmed at once: its excess refund is queued, and the drop cancels it before the job claims it
      const { depositId } = (await ingestDeposit(m.deps, { ...report, state: 'CONFIRMED', confirmations: 6 })) as { depositId: string };
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      expect(await ingestDeposit(m.deps, { ...report, dictatedRiskScore: '9' })).toMatchObject({ outcome: 'UPDATED', status: 'BLOCKED' });
      expect((await refundsOf(depositId)).map((x) => [x.type, x.reason, x.status, x.amount])).toEqual([['FULL', 'ILLICIT_DEPOSIT', 'NON_REFUNDABLE', '0.015']]);
      expect((await mRead(p.paymentId, shop)).status).toBe('BLOCKED');
      expect(await balancesOf(shop.businessId)).toEqual([['FEES', 'EUR', '0.00'], ['MERCHANT', 'EUR', '0.00']]);
    });

    const withdraw = (shop: TestBusiness, amount: string) =>
      m.signed('POST', '/v1/withdrawals', {
        clientWithdrawalId: `reorg-${randomUUID()}`, businessId: shop.businessId, withdrawCurrency: 'BTC', network: 'BTC',
        address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amount,
      }, shop);

    it('a credit already withdrawn: the balance goes below zero (the merchant owes it) and the next withdrawal is refused', async () => {
      const shop = await m.addBusiness({ name: 'Reorg shop 3' });
      const p = await mBtc('0.01', shop);
      const report = reportFor(p.walletAddress!);
      await ingestDeposit(m.deps, report);
      const out = await withdraw(shop, '0.005');
      expect(out.statusCode, out.body).toBe(200);
      const deducted = new Dec(out.json().deductedSettlementAmount as string);
      await ingestDeposit(m.deps, { ...report, state: 'DROPPED', confirmations: 0 });
      const merchant = (await getBalances(m.db.db, shop.businessId)).find((b) => b.account === 'MERCHANT')!;
      expect(new Dec(merchant.amount).toFixed(2)).toBe(deducted.neg().toFixed(2));
      expect(new Dec(merchant.amount).isNegative()).toBe(true);
      const sums = await sumEntries(m.db.db, shop.businessId);
      expect(sums.map((b) => [b.account, new Dec(b.amount).toFixed(2)])).toEqual(
        (await getBalances(m.db.db, shop.businessId)).map((b) => [b.account, new Dec(b.amount).toFixed(2)]),
      );
      const refused = await withdraw(shop, '0.0001');
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json().code).toBe('INSUFFICIENT_BALANCE');
      // GET /v1/balances says so too (its response schema is checked in tests)
      const balances = await m.signed('GET', '/v1/balances', undefined, shop);
      expect(balances.statusCode, balances.body).toBe(200);
      expect(balances.json().balances).toEqual([{ currency: 'EUR', available: deducted.neg().toFixed(2), pending: deducted.toFixed(2) }]);
      expect(new Dec((await getBalances(m.db.db, shop.businessId)).find((b) => b.account === 'MERCHANT')!.amount).toFixed(2)).toBe(deducted.neg().toFixed(2));
    });
  });

  describe('compliance while the chain has not confirmed yet', () => {
    it('approved before confirmation → UNCONFIRMED, then CONFIRMED by the chain, DEPOSITED', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.01', m.business, { riskScore: '6' });
      expect(s.deposit?.status).toBe('COMPLIANCE_REVIEW');
      // the chain confirms during review: still held
      expect(await caller(m, admin).deposits.decide({ depositId: s.deposit!.id, decision: 'APPROVE' })).toEqual({ status: 'UNCONFIRMED' });
      expect((await mRead(p.paymentId)).status).toBe('AWAITING');
      await mine(s.transactionId);
      const r = await mRead(p.paymentId);
      expect(r.status).toBe('DEPOSITED');
      expect(depositOf(r, s.transactionId).status).toBe('CONFIRMED');
    });

    it('dropped by the chain during review → FAILED, payment FAILED; a decision then is a CONFLICT', async () => {
      const p = await mBtc('0.01');
      const s = await mSend(p.paymentId, '0.01', m.business, { riskScore: '6', confirm: false });
      await mine(s.transactionId);
      const r = await mRead(p.paymentId);
      expect(depositOf(r, s.transactionId).status).toBe('FAILED');
      expect(r.status).toBe('FAILED');
      await expect(caller(m, admin).deposits.decide({ depositId: s.deposit!.id, decision: 'APPROVE' })).rejects.toMatchObject({ code: 'CONFLICT' });
    });
  });

  describe('FIXED vs FLOATING when the rate moves', () => {
    it('BTC rises 10 % after the currency is chosen: FIXED keeps 60000, FLOATING values at 66000', async () => {
      const fixed = await mPay({ displayCurrency: 'EUR', displayAmount: '600.00' });
      const floating = await mPay({ displayCurrency: 'EUR', displayAmount: '600.00', rateType: 'FLOATING' });
      expect([fixed.status, fixed.rateType, floating.status, floating.rateType]).toEqual(['NEW', 'FIXED', 'NEW', 'FLOATING']);
      for (const p of [fixed, floating]) {
        const chosen = await caller(m, admin).payments.chooseCurrency({ paymentId: p.paymentId, depositCurrency: 'BTC', network: 'BTC' });
        expect([chosen.status, chosen.expectedDepositAmount]).toEqual(['PENDING', '0.01']);
      }
      const original = m.deps.rates;
      const up = new Dec('1.1');
      const moved = async (from: PricedCurrency, to: PricedCurrency, at: Date) => {
        const r = await original.rate(from, to, at);
        return from === 'BTC' && to !== 'BTC' ? r.mul(up) : to === 'BTC' && from !== 'BTC' ? r.div(up) : r;
      };
      m.deps.rates = { rate: moved, provenance: async (from, to, at) => ({ rate: await moved(from, to, at), sources: ['test'], at }) };
      try {
        // 0.00909091 BTC: at 60000 = 545.4546 → 545.45 EUR; at 66000 = 600.00006 → 600.00 EUR
        const sf = await mSend(fixed.paymentId, '0.00909091');
        const sl = await mSend(floating.paymentId, '0.00909091');
        await mine(sf.transactionId);
        await mine(sl.transactionId);
        const rf = await mRead(fixed.paymentId);
        const rl = await mRead(floating.paymentId);
        // FIXED: locked 60000: 545.45 EUR, fee 5.45, payable 540.00 — short of 600.00
        expect(depositOf(rf, sf.transactionId)).toMatchObject({ status: 'CONFIRMED', displayAmount: '545.45', displayServiceFee: '5.45', displayPayableAmount: '540.00' });
        expect(rf.status).toBe('AWAITING');
        // FLOATING: market 66000: 600.00 EUR, fee 6.00, payable 594.00 — covers the price
        expect(depositOf(rl, sl.transactionId)).toMatchObject({ status: 'CONFIRMED', displayAmount: '600.00', displayServiceFee: '6.00', displayPayableAmount: '594.00' });
        expect(rl.status).toBe('DEPOSITED');
        const sources = await rows<{ payment_id: string; rate_source: string; rate_display: string }>(m.db.sql`
          select payment_id, rate_source, rate_display::text from deposits where payment_id in ${m.db.sql([fixed.paymentId, floating.paymentId])}`);
        const byPayment = Object.fromEntries(sources.map((s) => [s.payment_id, [s.rate_source, new Dec(s.rate_display).toFixed()]]));
        expect(byPayment[fixed.paymentId]).toEqual(['FIXED', '60000']);
        expect(byPayment[floating.paymentId]).toEqual(['MARKET', '66000']);
      } finally {
        m.deps.rates = original;
      }
    });
  });

  describe('timeline', () => {
    it('payments.timeline lists payment, deposit and refund events in time order', async () => {
      const shop = await m.addBusiness({ name: 'Timeline shop', overpaymentPolicy: 'EXCESS_REFUND' });
      const t0 = m.clock.now();
      const p = await mBtc('0.01', shop);
      m.clock.advance(1000);
      const t1 = m.clock.now();
      const s = await mSend(p.paymentId, '0.012', shop);
      m.clock.advance(1000);
      const t2 = m.clock.now();
      await mine(s.transactionId);
      const [refund] = await rows<{ id: string }>(m.db.sql`select id from refunds where deposit_id = ${s.deposit!.id}`);
      m.clock.advance(1000);
      const t3 = m.clock.now();
      expect(await broadcastRefund(m.deps, m.deps.chains, refund!.id)).toBe('CONFIRMED');

      const events = await caller(m, admin).payments.timeline({ paymentId: p.paymentId });
      const line = (e: (typeof events)[number]) => `${e.entity} ${e.fromStatus ?? '(new)'}→${e.toStatus}`;
      // in time order
      // `at` is UNIX seconds, as in every REST record
      const times = events.map((e) => e.at);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      // what happened at each instant
      const at = (when: Date) => events.filter((e) => e.at === Math.floor(when.getTime() / 1000)).map(line).sort();
      expect(at(t0)).toEqual(['payment (new)→PENDING']);
      expect(at(t1)).toEqual(['deposit (new)→UNCONFIRMED', 'payment PENDING→AWAITING']);
      expect(at(t2)).toEqual(['deposit UNCONFIRMED→CONFIRMED', 'payment AWAITING→DEPOSITED', 'refund (new)→PENDING']);
      expect(at(t3)).toEqual(['refund PENDING→CONFIRMED']);
      expect(events).toHaveLength(7);
      // each entity's events chain: every event starts where the previous one ended
      for (const entity of ['payment', 'deposit', 'refund'] as const) {
        const own = events.filter((e) => e.entity === entity);
        own.forEach((e, i) => expect(e.fromStatus).toBe(i === 0 ? null : own[i - 1]!.toStatus));
      }
      expect(new Set(events.filter((e) => e.entity === 'deposit').map((e) => e.entityId))).toEqual(new Set([s.deposit!.id]));
      expect(new Set(events.filter((e) => e.entity === 'refund').map((e) => e.entityId))).toEqual(new Set([refund!.id]));
    });
  });
});

describe('expiry with the real worker and its cron', () => {
  it('a worker that starts after a payment fell overdue expires it at once (its start-up sweep), with one EXPIRED event', async () => {
    const e = await startTestApp();
    let runner: Runner | null = null;
    try {
      const p = await createIn(e, e.business, { depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' });
      e.clock.advance(31 * 60_000);
      runner = await startWorker(e.deps, { concurrency: 2, pollInterval: 50 });
      await eventually(async () => (await getIn(e, e.business, p.paymentId)).status === 'EXPIRED', 10_000, 'the payment expired by the worker');
      const events = await rows<{ to_status: string; reason: string }>(
        e.db.sql`select to_status, reason from events where entity_type = 'payment' and entity_id = ${p.paymentId} order by id`,
      );
      expect(events).toEqual([{ to_status: 'PENDING', reason: 'created' }, { to_status: 'EXPIRED', reason: 'expired' }]);
    } finally {
      await runner?.stop();
      await e.close();
    }
  });
});
