import { describe, expect, test } from 'vitest';
import {
  bumpedFees,
  checkFunds,
  gasTopUp,
  maxGasCost,
  nativeSweepValue,
  sweepFees,
  toBaseUnits,
} from '../../../server/adapters/chain/evm/signer.rules.js';

const gwei = (n: number) => BigInt(n) * 1_000_000_000n;

describe('signer rules', () => {
  test('decimal amounts to base units, exactly', () => {
    expect(toBaseUnits('12.5', 6)).toBe(12_500_000n);
    expect(toBaseUnits('0.000001', 6)).toBe(1n);
    expect(toBaseUnits('1.100000000', 6)).toBe(1_100_000n);
    expect(toBaseUnits('1.000000000000000001', 18)).toBe(1_000_000_000_000_000_001n);
    expect(toBaseUnits('123456789012345678901234567890', 0)).toBe(123456789012345678901234567890n);
    expect(() => toBaseUnits('0.0000001', 6)).toThrow(/more than 6 decimals/);
    expect(() => toBaseUnits('-1', 6)).toThrow(/positive decimal/);
    expect(() => toBaseUnits('1e3', 6)).toThrow(/positive decimal/);
    expect(() => toBaseUnits('0.000', 6)).toThrow(/greater than zero/);
  });

  test('funds: native needs value + max gas; token needs the amount and the gas in coin', () => {
    const fees = { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(1) };
    const gasCost = maxGasCost(21_000n, fees);
    expect(gasCost).toBe(630_000_000_000_000n);
    expect(checkFunds({ nativeCurrency: 'ETH', nativeBalance: 10n ** 18n + gasCost, gasCost, value: 10n ** 18n })).toBeNull();
    expect(checkFunds({ nativeCurrency: 'ETH', nativeBalance: 10n ** 18n + gasCost - 1n, gasCost, value: 10n ** 18n })).toEqual({
      status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: 'ETH', needed: 10n ** 18n + gasCost, available: 10n ** 18n + gasCost - 1n,
    });
    expect(checkFunds({ nativeCurrency: 'ETH', nativeBalance: gasCost, gasCost, value: 0n, token: { currency: 'USDT', balance: 4n, amount: 5n } })).toMatchObject({
      currency: 'USDT', needed: 5n, available: 4n,
    });
    expect(checkFunds({ nativeCurrency: 'BNB', nativeBalance: 0n, gasCost, value: 0n, token: { currency: 'USDT', balance: 5n, amount: 5n } })).toMatchObject({
      currency: 'BNB', needed: gasCost, available: 0n,
    });
  });

  test('gas top-up for a token sweep is exactly the shortfall', () => {
    const fees = { maxFeePerGas: gwei(20), maxPriorityFeePerGas: gwei(1) };
    expect(gasTopUp(51_234n, fees, 0n)).toBe(51_234n * gwei(20));
    expect(gasTopUp(51_234n, fees, 1_000n)).toBe(51_234n * gwei(20) - 1_000n);
    expect(gasTopUp(51_234n, fees, 51_234n * gwei(20))).toBe(0n);
    expect(gasTopUp(51_234n, fees, 10n ** 18n)).toBe(0n);
  });

  test('sweep fees: the whole allowance (capped at 2× market), what the balance allows above the base fee, else another top-up', () => {
    const current = { maxFeePerGas: gwei(20), maxPriorityFeePerGas: gwei(2) };
    expect(sweepFees(50_000n, current, gwei(9), 50_000n * gwei(20))).toEqual(current);
    // Fees fell since the top-up: the allowance (25 gwei) is offered, the tip stays the market's.
    expect(sweepFees(50_000n, current, gwei(9), 50_000n * gwei(25) + 7n)).toEqual({ maxFeePerGas: gwei(25), maxPriorityFeePerGas: gwei(2) });
    // A deposit address rich in coin does not offer more than twice the market.
    expect(sweepFees(50_000n, current, gwei(9), 10n ** 18n)).toEqual({ maxFeePerGas: gwei(40), maxPriorityFeePerGas: gwei(2) });
    // Fees rose since the top-up: it covers 15 gwei, base fee 9 → pay 15 max with a 2 gwei tip.
    expect(sweepFees(50_000n, current, gwei(9), 50_000n * gwei(15))).toEqual({ maxFeePerGas: gwei(15), maxPriorityFeePerGas: gwei(2) });
    // Only 1 gwei above the base fee: the tip shrinks to fit.
    expect(sweepFees(50_000n, current, gwei(14), 50_000n * gwei(15))).toEqual({ maxFeePerGas: gwei(15), maxPriorityFeePerGas: gwei(1) });
    expect(sweepFees(50_000n, current, gwei(16), 50_000n * gwei(15))).toBeNull();
  });

  test('native sweep leaves exactly the max gas cost', () => {
    const fees = { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) };
    expect(nativeSweepValue(10n ** 18n, 21_000n, fees)).toBe(10n ** 18n - 21_000n * gwei(10));
    expect(nativeSweepValue(21_000n * gwei(10), 21_000n, fees)).toBeNull();
  });

  test('a replacement raises both fees by at least 10 % (12.5 %, rounded up), or to the market', () => {
    expect(bumpedFees({ maxFeePerGas: 1000n, maxPriorityFeePerGas: 100n }, { maxFeePerGas: 900n, maxPriorityFeePerGas: 50n })).toEqual({
      maxFeePerGas: 1125n, maxPriorityFeePerGas: 113n,
    });
    expect(bumpedFees({ maxFeePerGas: 1000n, maxPriorityFeePerGas: 100n }, { maxFeePerGas: 5000n, maxPriorityFeePerGas: 300n })).toEqual({
      maxFeePerGas: 5000n, maxPriorityFeePerGas: 300n,
    });
    const bumped = bumpedFees({ maxFeePerGas: 7n, maxPriorityFeePerGas: 7n }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n });
    expect(bumped.maxFeePerGas * 10n >= 77n && bumped.maxPriorityFeePerGas * 10n >= 77n).toBe(true);
    expect(bumped.maxFeePerGas >= bumped.maxPriorityFeePerGas).toBe(true);
  });
});
