/**
 * The REST withdrawal API (CONTRACT §4, §6; spec §8, §9) against a real
 * server and PostgreSQL: each business rule refused with its own 422 code,
 * shape errors 400, ownership and scopes, fee payer arithmetic computed by
 * hand from the sandbox rates (server/adapters/rates/sandbox.ts) and network fees
 * (server/modules/money/catalog.ts), idempotency, listing, concurrent balance
 * debits, credit-back on FAILED/BLOCKED, the whitelist and the metadata
 * endpoints.
 *
 * No worker runs here: withdrawals stay PROCESSING until the sandbox test
 * helper forces an outcome.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerEntries, withdrawals } from '../../../db/schema.js';
import { createApiKey } from '../../../server/modules/businesses/business.service.js';
import { sandboxTxHash } from '../../../server/modules/networks/tx-hash.rules.js';
import { getBalances, postEntries, sumEntries } from '../../../server/modules/ledger/ledger.service.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';
import { WithdrawalListSchema, WithdrawalRecordSchema } from '../../../server/modules/withdrawals/withdrawal-record.schema.js';

const ADDR = {
  BTC: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
  ETH: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  /** The same address with one letter's case flipped: a bad EIP-55 checksum. */
  ETH_BAD_CHECKSUM: '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  TRX: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  SOL: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
  XRP: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh',
  XLM: 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7',
};
/** A second valid BTC address (BIP173 P2WSH vector). */
const BTC_OTHER = 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3';

let t: TestApp;
let seq = 0;

type Who = TestBusiness;
const uid = () => `${++seq}-${Math.random().toString(36).slice(2, 8)}`;
const withdrawalBody = (who: Who, overrides: Record<string, unknown> = {}) => ({
  clientWithdrawalId: `w-${uid()}`,
  businessId: who.businessId,
  withdrawCurrency: 'BTC',
  network: 'BTC',
  address: ADDR.BTC,
  amount: '0.01',
  ...overrides,
});
const withdraw = (who: Who, overrides: Record<string, unknown> = {}) => t.signed('POST', '/v1/withdrawals', withdrawalBody(who, overrides), who);
const outcome = (who: Who, id: string, status: string) => t.signed('POST', `/v1/test-helpers/withdrawals/${id}/outcome`, { status }, who);
const fund = (who: Who, amount: string, currency = 'EUR') =>
  postEntries(t.db.db, [{ businessId: who.businessId, account: 'MERCHANT', currency, amount, kind: 'TEST' }], t.clock.now());

async function balance(who: Who, currency = 'EUR'): Promise<string> {
  const row = (await getBalances(t.db.db, who.businessId)).find((b) => b.account === 'MERCHANT' && b.currency === currency);
  return row ? new Dec(row.amount).toFixed(2) : 'none';
}

/** Running balances must equal the sum of their ledger entries. */
async function expectBalancesMatchLedger(who: Who) {
  const norm = (rows: { account: string; currency: string; amount: string }[]) =>
    rows.map((r) => `${r.account}/${r.currency}/${new Dec(r.amount).toFixed()}`).sort();
  expect(norm(await getBalances(t.db.db, who.businessId))).toEqual(norm(await sumEntries(t.db.db, who.businessId)));
}

function expectProblem(res: LightMyRequestResponse, status: number, code: string, field?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const p = res.json();
  expect(p.code, res.body).toBe(code);
  expect(p.status).toBe(status);
  if (field) expect(p.errors.map((e: { field: string }) => e.field)).toContain(field);
  return p;
}

async function ok(res: LightMyRequestResponse | Promise<LightMyRequestResponse>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

async function withdrawalCount(who: Who): Promise<number> {
  const [row] = await t.db.db.select({ n: sql<number>`count(*)::int` }).from(withdrawals).where(eq(withdrawals.businessId, who.businessId));
  return row!.n;
}

beforeAll(async () => {
  t = await startTestApp();
  await fund(t.business, '100000.00');
});
afterAll(async () => t?.close());

describe('POST /v1/withdrawals: business rules, each a 422 with its own code', () => {
  it.each([
    ['BNB', 'BSC', ADDR.ETH],
    ['TRX', 'TRX', ADDR.TRX],
    ['BAT', 'ETH', ADDR.ETH],
    ['DOGE', 'BTC', ADDR.BTC],
  ])('CURRENCY_NOT_SUPPORTED: %s on %s', async (currency, network, address) => {
    expectProblem(await withdraw(t.business, { withdrawCurrency: currency, network, address }), 422, 'CURRENCY_NOT_SUPPORTED', 'withdrawCurrency');
  });

  it.each([
    ['USDT', 'BTC', ADDR.BTC],
    ['BTC', 'MAIN', ADDR.BTC],
    ['USDT', 'MAIN', ADDR.ETH],
    ['ETH', 'TRX', ADDR.TRX],
    ['LINK', 'BSC', ADDR.ETH],
    ['USDT', 'SOL', ADDR.SOL],
  ])('NETWORK_NOT_SUPPORTED: %s on %s', async (currency, network, address) => {
    expectProblem(await withdraw(t.business, { withdrawCurrency: currency, network, address }), 422, 'NETWORK_NOT_SUPPORTED', 'network');
  });

  it('AMOUNT_ABOVE_MAXIMUM: 11 BTC, 10.00000001 BTC, and 11 BTC given as a display amount', async () => {
    expectProblem(await withdraw(t.business, { amount: '11' }), 422, 'AMOUNT_ABOVE_MAXIMUM');
    expectProblem(await withdraw(t.business, { amount: '10.00000001' }), 422, 'AMOUNT_ABOVE_MAXIMUM');
    // 660000.00 EUR / 60000 = 11 BTC
    expectProblem(await withdraw(t.business, { amount: undefined, displayAmount: '660000.00' }), 422, 'AMOUNT_ABOVE_MAXIMUM');
  });

  it('AMOUNT_BELOW_MINIMUM: below twice the network fee (BTC: 2 × 0.00002)', async () => {
    expectProblem(await withdraw(t.business, { amount: '0.00003' }), 422, 'AMOUNT_BELOW_MINIMUM');
    expectProblem(await withdraw(t.business, { amount: '0.00003999' }), 422, 'AMOUNT_BELOW_MINIMUM');
    const atMin = await ok(withdraw(t.business, { amount: '0.00004' }));
    expect(atMin.estimatedWithdrawAmount).toBe('0.00004');
  });

  it('INSUFFICIENT_BALANCE: no balance at all, and a balance below the debit; nothing is recorded', async () => {
    const empty = await t.addBusiness({ name: 'Empty' });
    expectProblem(await withdraw(empty, { amount: '0.0001' }), 422, 'INSUFFICIENT_BALANCE');
    expect(await withdrawalCount(empty)).toBe(0);

    const poor = await t.addBusiness({ name: 'Poor' });
    await fund(poor, '601.19');
    // 0.01 BTC + 0.00002 fee = 0.01002 × 60000 = 601.20 EUR: one cent short
    expectProblem(await withdraw(poor, { amount: '0.01' }), 422, 'INSUFFICIENT_BALANCE');
    expect(await balance(poor)).toBe('601.19');
    expect(await withdrawalCount(poor)).toBe(0);
    await fund(poor, '0.01');
    const w = await ok(withdraw(poor, { amount: '0.01' }));
    expect(w.deductedSettlementAmount).toBe('601.20');
    expect(await balance(poor)).toBe('0.00');
    await expectBalancesMatchLedger(poor);
  });

  it('INVALID_ADDRESS: a BTC address for ETH, a bad EIP-55 checksum, an ETH address for TRX', async () => {
    expectProblem(await withdraw(t.business, { withdrawCurrency: 'ETH', network: 'ETH', address: ADDR.BTC, amount: '0.1' }), 422, 'INVALID_ADDRESS', 'address');
    expectProblem(await withdraw(t.business, { withdrawCurrency: 'ETH', network: 'ETH', address: ADDR.ETH_BAD_CHECKSUM, amount: '0.1' }), 422, 'INVALID_ADDRESS', 'address');
    expectProblem(await withdraw(t.business, { withdrawCurrency: 'USDT', network: 'TRX', address: ADDR.ETH, amount: '10' }), 422, 'INVALID_ADDRESS', 'address');
    // the correctly checksummed and the all-lowercase forms are fine
    await ok(withdraw(t.business, { withdrawCurrency: 'ETH', network: 'ETH', address: ADDR.ETH, amount: '0.1' }));
    await ok(withdraw(t.business, { withdrawCurrency: 'ETH', network: 'ETH', address: ADDR.ETH.toLowerCase(), amount: '0.1' }));
  });

  it('INVALID_DESTINATION_TAG: not a number, out of uint32 range for XRP, a tag on a network without tags', async () => {
    const xrp = { withdrawCurrency: 'XRP', network: 'XRP', address: ADDR.XRP, amount: '10' };
    expectProblem(await withdraw(t.business, { ...xrp, destinationTag: 'abc' }), 422, 'INVALID_DESTINATION_TAG', 'destinationTag');
    expectProblem(await withdraw(t.business, { ...xrp, destinationTag: '4294967296' }), 422, 'INVALID_DESTINATION_TAG', 'destinationTag');
    expectProblem(await withdraw(t.business, { ...xrp, destinationTag: '007' }), 422, 'INVALID_DESTINATION_TAG', 'destinationTag');
    expectProblem(await withdraw(t.business, { destinationTag: '123' }), 422, 'INVALID_DESTINATION_TAG', 'destinationTag');
    const w = await ok(withdraw(t.business, { ...xrp, destinationTag: '4294967295' }));
    expect(w.destinationTag).toBe('4294967295');
    const xlm = await ok(withdraw(t.business, { withdrawCurrency: 'XLM', network: 'XLM', address: ADDR.XLM, amount: '100', destinationTag: '18446744073709551615' }));
    expect(xlm.destinationTag).toBe('18446744073709551615');
  });

  it('ADDRESS_NOT_WHITELISTED until the address is whitelisted for that currency and network', async () => {
    const strict = await t.addBusiness({ name: 'Strict', requireWhitelist: true });
    await fund(strict, '10000.00');
    expectProblem(await withdraw(strict), 422, 'ADDRESS_NOT_WHITELISTED', 'address');
    const entry = await ok(t.signed('POST', '/v1/whitelisted-addresses', { currency: 'BTC', network: 'BTC', address: ADDR.BTC, label: 'cold' }, strict));
    const body = withdrawalBody(strict);
    const w = await ok(t.signed('POST', '/v1/withdrawals', body, strict));
    expect(w.status).toBe('PROCESSING');
    // another address is still refused
    expectProblem(await withdraw(strict, { address: BTC_OTHER }), 422, 'ADDRESS_NOT_WHITELISTED');
    // removed from the whitelist: refused again
    await ok(t.signed('DELETE', `/v1/whitelisted-addresses/${entry.id}`, undefined, strict));
    expectProblem(await withdraw(strict), 422, 'ADDRESS_NOT_WHITELISTED');
    // but a replay of the one made before returns it (a retry must not read as a refusal of a payout under way)
    expect((await ok(t.signed('POST', '/v1/withdrawals', body, strict))).withdrawalId).toBe(w.withdrawalId);
    // a business that does not require a whitelist withdraws anywhere
    await ok(withdraw(t.business, { address: BTC_OTHER }));
  });

  it('SOL and USDC on SOL are payout options (2024-05-16)', async () => {
    // 1 SOL × 150 = 150.00; + 0.000005 SOL fee × 150 = 0.00075 → 150.00075 EUR, debited rounded up: 150.01
    const sol = await ok(withdraw(t.business, { withdrawCurrency: 'SOL', network: 'SOL', address: ADDR.SOL, amount: '1' }));
    expect(sol).toMatchObject({
      status: 'PROCESSING', withdrawCurrency: 'SOL', network: 'SOL', expectedDisplayAmount: '150.00', estimatedWithdrawAmount: '1',
      deductedSettlementAmount: '150.01', withdrawFee: '0.000005', feePayer: 'BUSINESS',
    });
    // USDC at the USD peg: 10 × 0.92 = 9.20; with the 0.01 USDC fee 10.01 × 0.92 = 9.2092 → 9.21
    const usdc = await ok(withdraw(t.business, { withdrawCurrency: 'USDC', network: 'SOL', address: ADDR.SOL, amount: '10' }));
    expect(usdc).toMatchObject({
      status: 'PROCESSING', withdrawCurrency: 'USDC', network: 'SOL', expectedDisplayAmount: '9.20', estimatedWithdrawAmount: '10',
      deductedSettlementAmount: '9.21', withdrawFee: '0.01',
    });
  });
});

describe('POST /v1/withdrawals: shape, ownership, scopes', () => {
  it('400 when both amount and displayAmount are given, or neither', async () => {
    expectProblem(await withdraw(t.business, { amount: '0.01', displayAmount: '600.00' }), 400, 'VALIDATION_FAILED');
    expectProblem(await withdraw(t.business, { amount: undefined }), 400, 'VALIDATION_FAILED');
  });

  it('400 for malformed amounts and missing fields', async () => {
    for (const amount of ['-1', '0', 'abc', '1e3', '0.000000001']) {
      expectProblem(await withdraw(t.business, { amount }), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await withdraw(t.business, { amount: undefined, displayAmount: '600.001' }), 400, 'VALIDATION_FAILED');
    expectProblem(await withdraw(t.business, { address: undefined }), 400, 'VALIDATION_FAILED', 'address');
    expectProblem(await withdraw(t.business, { feePayer: 'NOBODY' }), 400, 'VALIDATION_FAILED', 'feePayer');
  });

  it("403 for another business's businessId", async () => {
    const other = await t.addBusiness({ name: 'Other' });
    const res = await t.signed('POST', '/v1/withdrawals', withdrawalBody(other), t.business);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toMatch(/FORBIDDEN/);
    expect(await withdrawalCount(other)).toBe(0);
  });

  it('a READ_WITHDRAWAL-only key cannot POST but can read; a CREATE_WITHDRAWAL-only key cannot read', async () => {
    const reader = { ...t.business, ...(await createApiKey(t.db.db, t.deps.masterKey, t.business.businessId, ['READ_WITHDRAWAL'])) };
    const writer = { ...t.business, ...(await createApiKey(t.db.db, t.deps.masterKey, t.business.businessId, ['CREATE_WITHDRAWAL'])) };
    expectProblem(await t.signed('POST', '/v1/withdrawals', withdrawalBody(t.business), reader), 403, 'FORBIDDEN_SCOPE');
    await ok(t.signed('GET', '/v1/withdrawals?limit=1', undefined, reader));
    const created = await ok(t.signed('POST', '/v1/withdrawals', withdrawalBody(t.business), writer));
    expectProblem(await t.signed('GET', `/v1/withdrawals/${created.withdrawalId}`, undefined, writer), 403, 'FORBIDDEN_SCOPE');
    expectProblem(await t.signed('GET', '/v1/whitelisted-addresses', undefined, reader), 403, 'FORBIDDEN_SCOPE');
  });

  it('401 without a signature', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/withdrawals', payload: withdrawalBody(t.business) });
    expectProblem(res, 401, 'UNAUTHORIZED');
  });
});

describe('fee payer (2024-07-04): BUSINESS pays on top, RECIPIENT receives less', () => {
  it('BUSINESS (the default): 0.01 BTC sent, 601.20 EUR debited; after completion fee 0.00002 BTC = 1.20 EUR', async () => {
    const before = new Dec(await balance(t.business));
    const w = await ok(withdraw(t.business, { amount: '0.01' }));
    expect(w).toMatchObject({
      status: 'PROCESSING', feePayer: 'BUSINESS', displayCurrency: 'EUR', settlementCurrency: 'EUR',
      expectedDisplayAmount: '600.00', estimatedWithdrawAmount: '0.01', deductedSettlementAmount: '601.20', withdrawFee: '0.00002',
    });
    expect(before.sub(await balance(t.business)).toFixed(2)).toBe('601.20');
    await ok(outcome(t.business, w.withdrawalId, 'COMPLETED'));
    const done = await ok(t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`));
    expect(done).toMatchObject({
      status: 'COMPLETED', actualWithdrawAmount: '0.01', withdrawFee: '0.00002', actualDisplayAmount: '600.00', displayFee: '1.20',
      deductedSettlementAmount: '601.20', displayRateDepegLossAmount: '0.00', settlementRateDepegLossAmount: '0.00',
      transactionId: sandboxTxHash('BTC', `withdrawal:${w.withdrawalId}`),
    });
    expect(typeof done.completedAt).toBe('number');
    // completion does not give anything back
    expect(before.sub(await balance(t.business)).toFixed(2)).toBe('601.20');
  });

  it('RECIPIENT per request: 600.00 EUR debited, 0.00998 BTC sent', async () => {
    const w = await ok(withdraw(t.business, { amount: '0.01', feePayer: 'RECIPIENT' }));
    expect(w).toMatchObject({ feePayer: 'RECIPIENT', expectedDisplayAmount: '600.00', estimatedWithdrawAmount: '0.01', deductedSettlementAmount: '600.00' });
    await ok(outcome(t.business, w.withdrawalId, 'COMPLETED'));
    const done = await ok(t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`));
    // 0.01 − 0.00002 = 0.00998 BTC × 60000 = 598.80 EUR
    expect(done).toMatchObject({ status: 'COMPLETED', actualWithdrawAmount: '0.00998', withdrawFee: '0.00002', actualDisplayAmount: '598.80', displayFee: '1.20', deductedSettlementAmount: '600.00' });
  });

  it('USDT at the USD peg (1 USDT = 0.92 EUR), BUSINESS: 101 × 0.92 = 92.92 debited; depeg loss 101 × (0.92 − 0.9195)', async () => {
    const w = await ok(withdraw(t.business, { withdrawCurrency: 'USDT', network: 'TRX', address: ADDR.TRX, amount: '100' }));
    expect(w).toMatchObject({ feePayer: 'BUSINESS', expectedDisplayAmount: '92.00', estimatedWithdrawAmount: '100', deductedSettlementAmount: '92.92', withdrawFee: '1' });
    await ok(outcome(t.business, w.withdrawalId, 'COMPLETED'));
    const done = await ok(t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`));
    expect(done).toMatchObject({
      actualWithdrawAmount: '100', withdrawFee: '1', actualDisplayAmount: '92.00', displayFee: '0.92', deductedSettlementAmount: '92.92',
      // 101 × 0.0005 = 0.0505 → 0.05
      displayRateDepegLossAmount: '0.05', settlementRateDepegLossAmount: '0.05',
    });
  });

  it('a displayAmount is converted at the peg and rounded down: 46.00 EUR → 50 USDT', async () => {
    const w = await ok(withdraw(t.business, { withdrawCurrency: 'USDT', network: 'TRX', address: ADDR.TRX, amount: undefined, displayAmount: '46.00' }));
    // 50 + 1 fee = 51 × 0.92 = 46.92
    expect(w).toMatchObject({ expectedDisplayAmount: '46.00', estimatedWithdrawAmount: '50', deductedSettlementAmount: '46.92' });
  });

  it('the business default defaultFeePayer RECIPIENT applies unless the request says otherwise', async () => {
    const b = await t.addBusiness({ name: 'Recipient pays', defaultFeePayer: 'RECIPIENT' });
    await fund(b, '1000.00');
    const usdt = { withdrawCurrency: 'USDT', network: 'TRX', address: ADDR.TRX, amount: '100' };
    const byDefault = await ok(withdraw(b, usdt));
    expect(byDefault).toMatchObject({ feePayer: 'RECIPIENT', deductedSettlementAmount: '92.00', estimatedWithdrawAmount: '100' });
    const overridden = await ok(withdraw(b, { ...usdt, feePayer: 'BUSINESS' }));
    expect(overridden).toMatchObject({ feePayer: 'BUSINESS', deductedSettlementAmount: '92.92' });
    expect(await balance(b)).toBe('815.08'); // 1000 − 92.00 − 92.92
    await ok(outcome(b, byDefault.withdrawalId, 'COMPLETED'));
    const done = await ok(t.signed('GET', `/v1/withdrawals/${byDefault.withdrawalId}`, undefined, b));
    // 100 − 1 = 99 USDT × 0.92 = 91.08; depeg 100 × 0.0005 = 0.05
    expect(done).toMatchObject({
      actualWithdrawAmount: '99', withdrawFee: '1', actualDisplayAmount: '91.08', displayFee: '0.92', deductedSettlementAmount: '92.00',
      displayRateDepegLossAmount: '0.05', settlementRateDepegLossAmount: '0.05',
    });
    await expectBalancesMatchLedger(b);
  });

  it('settlementCurrency USDT: the USDT balance is debited 1:1, no settlement depeg', async () => {
    const b = await t.addBusiness({ name: 'USDT settled' });
    await fund(b, '500', 'USDT');
    const w = await ok(withdraw(b, { withdrawCurrency: 'USDT', network: 'TRX', address: ADDR.TRX, amount: '100', settlementCurrency: 'USDT' }));
    expect(w).toMatchObject({ settlementCurrency: 'USDT', displayCurrency: 'EUR', deductedSettlementAmount: '101', expectedDisplayAmount: '92.00' });
    expect(new Dec((await getBalances(t.db.db, b.businessId)).find((r) => r.currency === 'USDT')!.amount).toFixed()).toBe('399');
    await ok(outcome(b, w.withdrawalId, 'COMPLETED'));
    const done = await ok(t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`, undefined, b));
    expect(done).toMatchObject({ settlementRateDepegLossAmount: '0', displayRateDepegLossAmount: '0.05', deductedSettlementAmount: '101' });
  });
});

describe('idempotency on (businessId, clientWithdrawalId)', () => {
  it('the same body again returns the original record with 200 and debits once', async () => {
    const body = withdrawalBody(t.business, { amount: '0.002' });
    const first = await ok(t.signed('POST', '/v1/withdrawals', body));
    const before = await balance(t.business);
    const again = await ok(t.signed('POST', '/v1/withdrawals', body));
    expect(again.withdrawalId).toBe(first.withdrawalId);
    expect(again.deductedSettlementAmount).toBe(first.deductedSettlementAmount);
    expect(await balance(t.business)).toBe(before);
    const debits = await t.db.db.select().from(ledgerEntries).where(eq(ledgerEntries.withdrawalId, first.withdrawalId));
    expect(debits).toHaveLength(1);
  });

  it('a different body under the same clientWithdrawalId is 409 IDEMPOTENCY_CONFLICT', async () => {
    const body = withdrawalBody(t.business, { amount: '0.002' });
    await ok(t.signed('POST', '/v1/withdrawals', body));
    expectProblem(await t.signed('POST', '/v1/withdrawals', { ...body, amount: '0.003' }), 409, 'IDEMPOTENCY_CONFLICT');
    expectProblem(await t.signed('POST', '/v1/withdrawals', { ...body, feePayer: 'RECIPIENT' }), 409, 'IDEMPOTENCY_CONFLICT');
  });

  it('a retry that writes out the fee payer the original took from the business default is the same request; the other way round is not', async () => {
    const body = withdrawalBody(t.business, { amount: '0.002' });
    const first = await ok(t.signed('POST', '/v1/withdrawals', body));
    expect(first.feePayer).toBe('BUSINESS');
    const before = await balance(t.business);
    const explicit = await ok(t.signed('POST', '/v1/withdrawals', { ...body, feePayer: 'BUSINESS' }));
    expect(explicit.withdrawalId).toBe(first.withdrawalId);
    expect(await balance(t.business)).toBe(before);
    // Written out first, left out in the retry: that retry asks for whatever the default is by then.
    const written = withdrawalBody(t.business, { amount: '0.002', feePayer: 'BUSINESS' });
    await ok(t.signed('POST', '/v1/withdrawals', written));
    expectProblem(await t.signed('POST', '/v1/withdrawals', { ...written, feePayer: undefined }), 409, 'IDEMPOTENCY_CONFLICT');
  });

  it('the same clientWithdrawalId in another business is a different withdrawal', async () => {
    const other = await t.addBusiness({ name: 'Same ids' });
    await fund(other, '1000.00');
    const body = withdrawalBody(t.business, { amount: '0.001' });
    const mine = await ok(t.signed('POST', '/v1/withdrawals', body));
    const theirs = await ok(t.signed('POST', '/v1/withdrawals', { ...body, businessId: other.businessId }, other));
    expect(theirs.withdrawalId).not.toBe(mine.withdrawalId);
  });

  it('concurrent requests with different bodies under one clientWithdrawalId: one wins, the others are 409', async () => {
    const b = await t.addBusiness({ name: 'Concurrent conflicts' });
    await fund(b, '1000.00');
    const clientWithdrawalId = `race-${uid()}`;
    const amounts = ['0.001', '0.002', '0.003', '0.004', '0.005'];
    const results = await Promise.all(amounts.map((amount) => withdraw(b, { clientWithdrawalId, amount })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    const conflicts = results.filter((r) => r.statusCode === 409);
    expect(conflicts).toHaveLength(4);
    for (const r of conflicts) expect(r.json().code).toBe('IDEMPOTENCY_CONFLICT');
    const winner = results.find((r) => r.statusCode === 200)!.json();
    expect(await balance(b)).toBe(new Dec('1000').sub(winner.deductedSettlementAmount).toFixed(2));
    expect(await withdrawalCount(b)).toBe(1);
  });

  it('10 concurrent identical requests create exactly one withdrawal and one debit', async () => {
    const b = await t.addBusiness({ name: 'Concurrent duplicates' });
    await fund(b, '1000.00');
    const body = withdrawalBody(b, { amount: '0.001' });
    const results = await Promise.all(Array.from({ length: 10 }, () => t.signed('POST', '/v1/withdrawals', body, b)));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(new Set(results.map((r) => r.json().withdrawalId)).size).toBe(1);
    const rows = await t.db.db.select().from(withdrawals).where(and(eq(withdrawals.businessId, b.businessId), eq(withdrawals.clientWithdrawalId, body.clientWithdrawalId)));
    expect(rows).toHaveLength(1);
    // 0.001 + 0.00002 = 0.00102 × 60000 = 61.20
    expect(await balance(b)).toBe('938.80');
    await expectBalancesMatchLedger(b);
  });
});

describe('GET /v1/withdrawals', () => {
  let b: Who;
  const ids: string[] = [];
  beforeAll(async () => {
    b = await t.addBusiness({ name: 'Lister' });
    await fund(b, '10000.00');
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000);
      ids.push((await ok(withdraw(b, { amount: '0.001', clientWithdrawalId: `list-${i}` }))).withdrawalId);
    }
  });

  it('GET by id returns the same record as the POST, with the screening result', async () => {
    const created = await ok(withdraw(b, { amount: '0.001' }));
    const got = await ok(t.signed('GET', `/v1/withdrawals/${created.withdrawalId}`, undefined, b));
    expect(got).toEqual(created);
    for (const key of ['withdrawalId', 'clientWithdrawalId', 'businessId', 'status', 'withdrawCurrency', 'network', 'address', 'destinationTag',
      'displayCurrency', 'expectedDisplayAmount', 'estimatedWithdrawAmount', 'settlementCurrency', 'feePayer', 'createdAt']) {
      expect(got, key).toHaveProperty(key);
    }
    expect(got.addressOwner).toEqual({ name: expect.any(String), category: expect.any(String) });
    expect(Array.isArray(got.sourceRiskEntities)).toBe(true);
    expect(Array.isArray(got.destinationRiskEntities)).toBe(true);
    expect(got.createdAt).toBe(Math.floor(t.clock.now().getTime() / 1000));
  });

  it("another business's withdrawal, an unknown id and a non-uuid are 404", async () => {
    expectProblem(await t.signed('GET', `/v1/withdrawals/${ids[0]}`), 404, 'NOT_FOUND');
    expectProblem(await t.signed('GET', '/v1/withdrawals/00000000-0000-4000-8000-000000000000', undefined, b), 404, 'NOT_FOUND');
    expectProblem(await t.signed('GET', '/v1/withdrawals/not-a-uuid', undefined, b), 404, 'NOT_FOUND');
  });

  it('lists newest first in pages that cover every withdrawal exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { items: { withdrawalId: string; clientWithdrawalId: string }[]; nextCursor: string | null } = await ok(
        t.signed('GET', `/v1/withdrawals?limit=2${cursor ? `&cursor=${cursor}` : ''}`, undefined, b),
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.filter((i) => i.clientWithdrawalId.startsWith('list-')).map((i) => i.withdrawalId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(cursor).toBeNull();
    expect(seen).toEqual([...ids].reverse());
    const all = await ok(t.signed('GET', '/v1/withdrawals?limit=100', undefined, b));
    for (const item of all.items) expect(item.businessId).toBe(b.businessId);
  });

  it('filters by status and by clientWithdrawalId', async () => {
    await ok(outcome(b, ids[1]!, 'FAILED'));
    const failed = await ok(t.signed('GET', '/v1/withdrawals?status=FAILED', undefined, b));
    expect(failed.items.map((i: { withdrawalId: string }) => i.withdrawalId)).toEqual([ids[1]]);
    expect(failed.items[0].status).toBe('FAILED');
    const processing = await ok(t.signed('GET', '/v1/withdrawals?status=PROCESSING&limit=100', undefined, b));
    expect(processing.items.map((i: { withdrawalId: string }) => i.withdrawalId)).not.toContain(ids[1]);
    for (const i of processing.items) expect(i.status).toBe('PROCESSING');
    const one = await ok(t.signed('GET', '/v1/withdrawals?clientWithdrawalId=list-3', undefined, b));
    expect(one.items.map((i: { withdrawalId: string }) => i.withdrawalId)).toEqual([ids[3]]);
    expectProblem(await t.signed('GET', '/v1/withdrawals?status=LOST', undefined, b), 400, 'VALIDATION_FAILED');
    expectProblem(await t.signed('GET', '/v1/withdrawals?cursor=bogus', undefined, b), 400, 'VALIDATION_FAILED');
  });
});

describe('balances', () => {
  it('50 concurrent withdrawals against a balance covering exactly 10: 10 accepted, 40 INSUFFICIENT_BALANCE, balance 0', async () => {
    const b = await t.addBusiness({ name: 'Race' });
    // each: 0.01 BTC paid by the recipient = 600.00 EUR
    await fund(b, '6000.00');
    const results = await Promise.all(Array.from({ length: 50 }, () => withdraw(b, { amount: '0.01', feePayer: 'RECIPIENT' })));
    const accepted = results.filter((r) => r.statusCode === 200);
    const refused = results.filter((r) => r.statusCode !== 200);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) {
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json().code).toBe('INSUFFICIENT_BALANCE');
    }
    for (const r of accepted) expect(r.json().deductedSettlementAmount).toBe('600.00');
    expect(await balance(b)).toBe('0.00');
    expect(await withdrawalCount(b)).toBe(10);
    await expectBalancesMatchLedger(b);
  });

  it('concurrent withdrawals leave the exact remainder', async () => {
    const b = await t.addBusiness({ name: 'Remainder' });
    await fund(b, '1999.99');
    const results = await Promise.all(Array.from({ length: 8 }, () => withdraw(b, { amount: '0.01', feePayer: 'RECIPIENT' })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(3);
    expect(results.filter((r) => r.statusCode === 422 && r.json().code === 'INSUFFICIENT_BALANCE')).toHaveLength(5);
    expect(await balance(b)).toBe('199.99');
    await expectBalancesMatchLedger(b);
  });

  it.each(['FAILED', 'BLOCKED'])('%s credits the debit back, once', async (status) => {
    const b = await t.addBusiness({ name: `Outcome ${status}` });
    await fund(b, '1000.00');
    const w = await ok(withdraw(b, { amount: '0.01' }));
    expect(await balance(b)).toBe('398.80');
    const res = await ok(outcome(b, w.withdrawalId, status));
    expect(res.status).toBe(status);
    expect(await balance(b)).toBe('1000.00');
    const got = await ok(t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`, undefined, b));
    expect(got.status).toBe(status);
    expect(got.transactionId).toBeNull();
    // a final withdrawal takes no second outcome, and nothing is credited twice
    expectProblem(await outcome(b, w.withdrawalId, 'COMPLETED'), 422, 'WITHDRAWAL_FINAL');
    expectProblem(await outcome(b, w.withdrawalId, status), 422, 'WITHDRAWAL_FINAL');
    expect(await balance(b)).toBe('1000.00');
    const entries = await t.db.db.select().from(ledgerEntries).where(eq(ledgerEntries.withdrawalId, w.withdrawalId));
    expect(entries.map((e) => new Dec(e.amount).toFixed(2)).sort()).toEqual(['-601.20', '601.20']);
    await expectBalancesMatchLedger(b);
  });

  it("the outcome helper cannot touch another business's withdrawal", async () => {
    const w = await ok(withdraw(t.business, { amount: '0.001' }));
    const other = await t.addBusiness({ name: 'Meddler' });
    expectProblem(await outcome(other, w.withdrawalId, 'FAILED'), 404, 'NOT_FOUND');
    expectProblem(await outcome(t.business, w.withdrawalId, 'LOST'), 400, 'VALIDATION_FAILED');
  });
});

describe('whitelisted addresses (2023-02-09: network mandatory)', () => {
  let b: Who;
  beforeAll(async () => {
    b = await t.addBusiness({ name: 'Whitelister' });
  });
  const add = (body: Record<string, unknown>, who: Who = b) => t.signed('POST', '/v1/whitelisted-addresses', body, who);

  it('400 without network', async () => {
    expectProblem(await add({ currency: 'BTC', address: ADDR.BTC }), 400, 'VALIDATION_FAILED', 'network');
  });

  it('422 for currency/network pairs that are not withdrawal pairs, and for invalid addresses or tags', async () => {
    expectProblem(await add({ currency: 'BNB', network: 'BSC', address: ADDR.ETH }), 422, 'CURRENCY_NOT_SUPPORTED');
    expectProblem(await add({ currency: 'USDT', network: 'BTC', address: ADDR.BTC }), 422, 'NETWORK_NOT_SUPPORTED');
    expectProblem(await add({ currency: 'BTC', network: 'MAIN', address: ADDR.BTC }), 422, 'NETWORK_NOT_SUPPORTED');
    expectProblem(await add({ currency: 'ETH', network: 'ETH', address: ADDR.ETH_BAD_CHECKSUM }), 422, 'INVALID_ADDRESS');
    expectProblem(await add({ currency: 'XRP', network: 'XRP', address: ADDR.XRP, destinationTag: 'x1' }), 422, 'INVALID_DESTINATION_TAG');
  });

  it('creates, lists, refuses a duplicate with 422 (a business rule; 409 is for idempotency), deletes, and 404s an unknown id', async () => {
    const created = await ok(add({ currency: 'USDC', network: 'SOL', address: ADDR.SOL, label: 'treasury' }));
    expect(created).toMatchObject({ currency: 'USDC', network: 'SOL', address: ADDR.SOL, destinationTag: null, label: 'treasury' });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    const tagged = await ok(add({ currency: 'XRP', network: 'XRP', address: ADDR.XRP, destinationTag: '42' }));
    expect(tagged.destinationTag).toBe('42');
    // the same address with another tag is another entry; the same one again is a duplicate
    await ok(add({ currency: 'XRP', network: 'XRP', address: ADDR.XRP, destinationTag: '43' }));
    expectProblem(await add({ currency: 'USDC', network: 'SOL', address: ADDR.SOL }), 422, 'ALREADY_WHITELISTED');

    const list = await ok(t.signed('GET', '/v1/whitelisted-addresses', undefined, b));
    expect(list.items.map((i: { id: string }) => i.id).sort()).toHaveLength(3);
    expect(list.items.map((i: { id: string }) => i.id)).toContain(created.id);
    // another business sees none of them and cannot delete them
    const stranger = await t.addBusiness({ name: 'Stranger' });
    expect((await ok(t.signed('GET', '/v1/whitelisted-addresses', undefined, stranger))).items).toEqual([]);
    expectProblem(await t.signed('DELETE', `/v1/whitelisted-addresses/${created.id}`, undefined, stranger), 404, 'NOT_FOUND');

    const deleted = await ok(t.signed('DELETE', `/v1/whitelisted-addresses/${created.id}`, undefined, b));
    expect(deleted).toMatchObject({ id: created.id, deleted: true });
    // The same DELETE signed in the same second is the same signature, which a whitelist change accepts
    // once (409 REQUEST_ALREADY_USED); signed a second later, it is a new request, and the entry is gone.
    expectProblem(await t.signed('DELETE', `/v1/whitelisted-addresses/${created.id}`, undefined, b), 409, 'REQUEST_ALREADY_USED');
    t.clock.advance(1_000);
    expectProblem(await t.signed('DELETE', `/v1/whitelisted-addresses/${created.id}`, undefined, b), 404, 'NOT_FOUND');
    expectProblem(await t.signed('DELETE', '/v1/whitelisted-addresses/00000000-0000-4000-8000-000000000000', undefined, b), 404, 'NOT_FOUND');
    expectProblem(await t.signed('DELETE', '/v1/whitelisted-addresses/nope', undefined, b), 404, 'NOT_FOUND');
    const after = await ok(t.signed('GET', '/v1/whitelisted-addresses', undefined, b));
    expect(after.items.map((i: { id: string }) => i.id)).not.toContain(created.id);
    expect(after.items).toHaveLength(2);
    // deleted, it can be added again
    await ok(add({ currency: 'USDC', network: 'SOL', address: ADDR.SOL }));
  });
});

describe('metadata', () => {
  const CRYPTO = ['BCH', 'BNB', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'TRX', 'USDC', 'USDT', 'XLM', 'XRP'];
  type Net = { network: string; deposit: boolean; withdraw: boolean; minAmount: string | null; minWithdrawalAmount: string | null; maxAmount: string | null };
  type Cur = { code: string; type: string; decimals: number; deposit: boolean; withdraw: boolean; networks: Net[] };

  it('GET /v1/currencies: 12 cryptocurrencies with networks, decimals, flags and maxAmount for withdrawable pairs', async () => {
    const doc = await ok(t.signed('GET', '/v1/currencies'));
    const crypto = (doc.currencies as Cur[]).filter((c) => c.type === 'CRYPTO');
    expect(crypto.map((c) => c.code).sort()).toEqual(CRYPTO);
    const byCode = Object.fromEntries(crypto.map((c) => [c.code, c]));
    for (const c of crypto) {
      expect(Number.isInteger(c.decimals), c.code).toBe(true);
      expect(typeof c.deposit).toBe('boolean');
      expect(typeof c.withdraw).toBe('boolean');
      expect(c.networks.length, c.code).toBeGreaterThan(0);
      for (const n of c.networks) {
        expect(n.network).not.toBe('MAIN');
        if (n.withdraw) expect(n.maxAmount, `${c.code}/${n.network}`).toMatch(/^[0-9]+(\.[0-9]+)?$/);
        else expect(n.maxAmount, `${c.code}/${n.network}`).toBeNull();
      }
    }
    expect(crypto.filter((c) => c.withdraw).map((c) => c.code).sort()).toEqual(['BCH', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'USDC', 'USDT', 'XLM', 'XRP']);
    expect(byCode.BTC).toMatchObject({ decimals: 8, deposit: true, withdraw: true });
    // minAmount: the smallest payment; minWithdrawalAmount: twice the network fee (CONTRACT §4).
    expect(byCode.BTC!.networks).toEqual([{ network: 'BTC', deposit: true, withdraw: true, minAmount: '0.0001', minWithdrawalAmount: '0.00004', maxAmount: '10' }]);
    expect(byCode.USDC!.networks.find((n) => n.network === 'SOL')).toMatchObject({ deposit: true, withdraw: true, maxAmount: '1000000' });
    expect(byCode.USDC!.networks.map((n) => n.network).sort()).toEqual(['BSC', 'ETH', 'SOL', 'TRX']);
    expect(byCode.SOL!.networks).toEqual([expect.objectContaining({ network: 'SOL', withdraw: true, maxAmount: '5000' })]);
    expect(byCode.ETH!.networks.filter((n) => n.withdraw).map((n) => n.network).sort()).toEqual(['BSC', 'ETH']);
    expect(byCode.BNB).toMatchObject({ withdraw: false });
    expect(byCode.TRX).toMatchObject({ withdraw: false });
  });

  it('GET /v1/rates: comma-separated codes, rates as decimal strings', async () => {
    const doc = await ok(t.signed('GET', '/v1/rates?from=BTC,ETH&to=EUR,USD'));
    expect(doc.rates).toEqual({
      BTC: { EUR: '60000', USD: '65217.3913043' }, // 60000 / 0.92, 12 significant digits
      ETH: { EUR: '3000', USD: '3260.86956522' },
    });
    expect(typeof doc.at).toBe('number');
    const fiat = await ok(t.signed('GET', '/v1/rates?from=EUR&to=BTC,GBP'));
    expect(fiat.rates.EUR.BTC).toBe('0.0000166666666667');
    expect(typeof fiat.rates.EUR.GBP).toBe('string');
  });

  it('GET /v1/rates: an unknown code or a missing list is 400', async () => {
    expectProblem(await t.signed('GET', '/v1/rates?from=BTC,XXX&to=EUR'), 400, 'VALIDATION_FAILED');
    expectProblem(await t.signed('GET', '/v1/rates?from=BTC&to=EUR,NOPE'), 400, 'VALIDATION_FAILED');
    expectProblem(await t.signed('GET', '/v1/rates?from=BTC'), 400, 'VALIDATION_FAILED');
  });

  it('GET address validation: valid, and invalid with a reason', async () => {
    expect(await ok(t.signed('GET', `/api/v1/currency/BTC/network/BTC/address/${ADDR.BTC}/valid`))).toEqual({ valid: true });
    expect(await ok(t.signed('GET', `/api/v1/currency/USDC/network/SOL/address/${ADDR.SOL}/valid`))).toEqual({ valid: true });
    const bad = await ok(t.signed('GET', `/api/v1/currency/ETH/network/ETH/address/${ADDR.ETH_BAD_CHECKSUM}/valid`));
    expect(bad.valid).toBe(false);
    expect(bad.reason).toMatch(/EIP-55|checksum/);
    const wrongNet = await ok(t.signed('GET', `/api/v1/currency/ETH/network/ETH/address/${ADDR.BTC}/valid`));
    expect(wrongNet.valid).toBe(false);
    expect(typeof wrongNet.reason).toBe('string');
    const pair = await ok(t.signed('GET', `/api/v1/currency/USDT/network/BTC/address/${ADDR.BTC}/valid`));
    expect(pair.valid).toBe(false);
  });

  it('the deprecated POST /api/v1/addresses/validate answers the same with a Deprecation header', async () => {
    const res = await t.signed('POST', '/api/v1/addresses/validate', { currency: 'ETH', network: 'ETH', address: ADDR.ETH_BAD_CHECKSUM });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.deprecation).toBeTruthy();
    expect(res.json().valid).toBe(false);
    const good = await t.signed('POST', '/api/v1/addresses/validate', { currency: 'XRP', network: 'XRP', address: ADDR.XRP });
    expect(good.headers.deprecation).toBeTruthy();
    expect(good.json()).toEqual({ valid: true });
    // the GET successor carries no Deprecation header
    const successor = await t.signed('GET', `/api/v1/currency/XRP/network/XRP/address/${ADDR.XRP}/valid`);
    expect(successor.headers.deprecation).toBeUndefined();
  });

  it('metadata needs a valid key', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/currencies' }), 401, 'UNAUTHORIZED');
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/rates?from=BTC&to=EUR' }), 401, 'UNAUTHORIZED');
  });
});

describe('responses are the documented schemas (strict: a missing or stray field fails)', () => {
  it('POST, GET after COMPLETED, the outcome helper and the list each parse with WithdrawalRecordSchema / WithdrawalListSchema', async () => {
    const created = WithdrawalRecordSchema.parse(await ok(withdraw(t.business, { amount: '0.01' })));
    expect(created.status).toBe('PROCESSING');
    expect(created.actualWithdrawAmount).toBeUndefined();
    const forced = WithdrawalRecordSchema.parse(await ok(outcome(t.business, created.withdrawalId, 'COMPLETED')));
    expect(forced.status).toBe('COMPLETED');
    const done = WithdrawalRecordSchema.parse(await ok(t.signed('GET', `/v1/withdrawals/${created.withdrawalId}`)));
    expect([done.actualWithdrawAmount, done.transactionId]).toEqual(['0.01', sandboxTxHash('BTC', `withdrawal:${created.withdrawalId}`)]);
    const list = WithdrawalListSchema.parse(await ok(t.signed('GET', '/v1/withdrawals?limit=2')));
    expect(list.items.length).toBe(2);
    // The schema is strict: a record with a stray field does not pass.
    expect(WithdrawalRecordSchema.safeParse({ ...done, extra: 1 }).success).toBe(false);
  });
});
