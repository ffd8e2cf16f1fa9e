/**
 * The withdrawal callback body (spec §6.2, CONTRACT §6), per status, built by
 * the pure `withdrawalCallbackBody`: exact key sets against hand-written
 * lists, amounts as decimal strings, BLOCKED nulls, the sample spelling
 * `deductedSettlementAmount`, and the destination tag inside `toTxAddress`.
 */
import { describe, expect, it } from 'vitest';
import { toTxAddress, withdrawalCallbackBody, type WithdrawalForCallback } from '../../../server/modules/callbacks/withdrawal-callback-body.rules.js';
import { WithdrawalCallbackSchema } from '../../../server/modules/callbacks/callback-body.schema.js';

const base: WithdrawalForCallback = {
  withdrawalId: '4f8b6a3e-2d1c-4b7a-9e0f-1a2b3c4d5e6f',
  clientWithdrawalId: 'payout-42',
  businessId: '0c9d8e7f-6a5b-4c3d-8e1f-0a1b2c3d4e5f',
  displayCurrency: 'EUR',
  withdrawCurrency: 'USDT',
  settlementCurrency: 'EUR',
  expectedDisplayAmount: '92.00',
  estimatedWithdrawAmount: '100',
  address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  destinationTag: null,
  txAddressOwner: { name: 'Unhosted wallet', category: 'unhosted_wallet' },
};

const actuals = {
  actualDisplayAmount: '92.00',
  actualWithdrawAmount: '100',
  deductedSettlementAmount: '92.92',
  withdrawFee: '1',
  displayFee: '0.92',
  displayRateDepegLossAmount: '0.05',
  settlementRateDepegLossAmount: '0.05',
};

/** Spec §6.2 field table, with the sample spelling `deductedSettlementAmount`. */
const COMPLETED_KEYS = [
  'status', 'clientWithdrawalId', 'businessId', 'withdrawalId', 'displayCurrency', 'withdrawCurrency', 'settlementCurrency',
  'expectedDisplayAmount', 'actualDisplayAmount', 'estimatedWithdrawAmount', 'actualWithdrawAmount', 'deductedSettlementAmount',
  'withdrawFee', 'displayFee', 'displayRateDepegLossAmount', 'settlementRateDepegLossAmount', 'toTxAddress', 'transactionId',
  'txAddressOwner',
].sort();

/** Identifiers, currencies, expected and estimated amounts, toTxAddress, txAddressOwner. */
const FAILED_KEYS = [
  'status', 'clientWithdrawalId', 'businessId', 'withdrawalId', 'displayCurrency', 'withdrawCurrency', 'settlementCurrency',
  'expectedDisplayAmount', 'estimatedWithdrawAmount', 'toTxAddress', 'txAddressOwner',
].sort();

/** The keys BLOCKED carries as null: actual amounts, fees, transactionId, rate-loss fields, and the two extra keys of the sample. */
const BLOCKED_NULL_KEYS = [
  'actualDisplayAmount', 'actualWithdrawAmount', 'deductedSettlementAmount', 'withdrawFee', 'displayFee',
  'displayRateDepegLossAmount', 'settlementRateDepegLossAmount', 'transactionId', 'settlementServiceFee',
  'settlementMerchantTransactionFee',
].sort();

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

describe('COMPLETED', () => {
  const body = withdrawalCallbackBody('COMPLETED', { ...base, actuals, transactionId: 'abc123' });

  it('has exactly the keys of the field table', () => {
    expect(Object.keys(body).sort()).toEqual(COMPLETED_KEYS);
    expect(body).not.toHaveProperty('deducedSettlementAmount');
    expect(body).not.toHaveProperty('settlementServiceFee');
  });

  it('carries every value, amounts as decimal strings', () => {
    expect(body).toEqual({
      status: 'COMPLETED',
      clientWithdrawalId: 'payout-42',
      businessId: base.businessId,
      withdrawalId: base.withdrawalId,
      displayCurrency: 'EUR',
      withdrawCurrency: 'USDT',
      settlementCurrency: 'EUR',
      expectedDisplayAmount: '92.00',
      actualDisplayAmount: '92.00',
      estimatedWithdrawAmount: '100',
      actualWithdrawAmount: '100',
      deductedSettlementAmount: '92.92',
      withdrawFee: '1',
      displayFee: '0.92',
      displayRateDepegLossAmount: '0.05',
      settlementRateDepegLossAmount: '0.05',
      toTxAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      transactionId: 'abc123',
      txAddressOwner: { name: 'Unhosted wallet', category: 'unhosted_wallet' },
    });
    for (const key of COMPLETED_KEYS.filter((k) => /Amount$|Fee$/.test(k))) {
      expect(typeof body[key], key).toBe('string');
      expect(body[key], key).toMatch(DECIMAL);
    }
  });

  it('refuses to build a COMPLETED body without actual amounts or transaction', () => {
    expect(() => withdrawalCallbackBody('COMPLETED', base)).toThrow();
    expect(() => withdrawalCallbackBody('COMPLETED', { ...base, actuals, transactionId: null })).toThrow();
  });
});

describe('FAILED', () => {
  const body = withdrawalCallbackBody('FAILED', { ...base, actuals, transactionId: 'abc123' });

  it('has exactly identifiers, currencies, expected/estimated amounts, toTxAddress and txAddressOwner', () => {
    expect(Object.keys(body).sort()).toEqual(FAILED_KEYS);
  });

  it('has none of the actual amounts, fees or transactionId (absent, not null)', () => {
    for (const key of ['actualDisplayAmount', 'actualWithdrawAmount', 'deductedSettlementAmount', 'withdrawFee', 'displayFee', 'transactionId',
      'displayRateDepegLossAmount', 'settlementRateDepegLossAmount']) {
      expect(key in body, key).toBe(false);
    }
    expect(body.status).toBe('FAILED');
    expect(body.expectedDisplayAmount).toBe('92.00');
    expect(body.estimatedWithdrawAmount).toBe('100');
    expect(body.txAddressOwner).toEqual({ name: 'Unhosted wallet', category: 'unhosted_wallet' });
  });
});

describe('BLOCKED', () => {
  const owner = { name: 'Sanctioned entity', category: 'sanctions' };
  const body = withdrawalCallbackBody('BLOCKED', { ...base, txAddressOwner: owner });

  it('has the FAILED keys plus the null keys of the BLOCKED sample', () => {
    expect(Object.keys(body).sort()).toEqual([...FAILED_KEYS, ...BLOCKED_NULL_KEYS].sort());
  });

  it('carries actual amounts, fees, transactionId, rate losses, settlementServiceFee and settlementMerchantTransactionFee as null', () => {
    for (const key of BLOCKED_NULL_KEYS) expect(body[key], key).toBeNull();
    expect(body.settlementServiceFee).toBeNull();
    expect(body.settlementMerchantTransactionFee).toBeNull();
    expect(body.status).toBe('BLOCKED');
    expect(body.expectedDisplayAmount).toBe('92.00');
    expect(body.estimatedWithdrawAmount).toBe('100');
    expect(body.txAddressOwner).toEqual(owner);
  });
});

describe('txAddressOwner', () => {
  it('is exactly {name, category}, whatever else the screening result carries', () => {
    const owner = { name: 'Retail exchange', category: 'exchange', extra: 'x' } as unknown as WithdrawalForCallback['txAddressOwner'];
    const body = withdrawalCallbackBody('FAILED', { ...base, txAddressOwner: owner });
    expect(body.txAddressOwner).toEqual({ name: 'Retail exchange', category: 'exchange' });
  });
});

describe('toTxAddress', () => {
  const xrp = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

  it('is the bare address without a destination tag', () => {
    expect(toTxAddress(xrp, null)).toBe(xrp);
    const body = withdrawalCallbackBody('FAILED', base);
    expect(body.toTxAddress).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });

  it('carries the destination tag after the address in the same string', () => {
    const body = withdrawalCallbackBody('FAILED', { ...base, withdrawCurrency: 'XRP', address: xrp, destinationTag: '123456' });
    const value = body.toTxAddress as string;
    expect(value.startsWith(xrp)).toBe(true);
    expect(value.endsWith('123456')).toBe(true);
    // address, a separator, the tag: nothing else
    expect(value).toMatch(new RegExp(`^${xrp}[^0-9A-Za-z]+(dt=)?123456$`));
    expect(value).toBe(`${xrp}?dt=123456`);
  });
});

describe('the documented schema (OpenAPI webhooks.withdrawalCallback)', () => {
  it('accepts each status body as built, and refuses a COMPLETED body without its actuals', () => {
    for (const body of [
      withdrawalCallbackBody('COMPLETED', { ...base, actuals, transactionId: 'abc123' }),
      withdrawalCallbackBody('FAILED', base),
      withdrawalCallbackBody('BLOCKED', base),
    ]) expect(WithdrawalCallbackSchema.safeParse(body).error).toBeUndefined();
    expect(WithdrawalCallbackSchema.safeParse({ ...withdrawalCallbackBody('FAILED', base), status: 'COMPLETED' }).success).toBe(false);
  });
});
