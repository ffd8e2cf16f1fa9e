/**
 * The signer's pure arithmetic: amounts to base units, what a transaction
 * costs at most, whether the sender can pay, the gas a token sweep needs,
 * and the fees of a replacement. Amounts are bigint base units throughout.
 */
import type { HeldResult } from './types.js';

/** "12.5" with 6 decimals → 12500000n; refuses more decimals than the currency has, signs, and zero. */
export function toBaseUnits(amount: string, decimals: number): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (!match) throw new Error(`not a positive decimal amount: "${amount}"`);
  const [, whole, fraction = ''] = match;
  if (fraction.replace(/0+$/, '').length > decimals) throw new Error(`${amount} has more than ${decimals} decimals`);
  const units = BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0').slice(0, decimals) || '0');
  if (units === 0n) throw new Error('amount must be greater than zero');
  return units;
}

export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** The most an EIP-1559 transaction can cost in gas: the sender must hold this (plus its value). */
export function maxGasCost(gasLimit: bigint, fees: Fees): bigint {
  return gasLimit * fees.maxFeePerGas;
}

/**
 * Can the sender pay? Native: value + max gas cost from the native balance.
 * Token: the amount from the token balance, the max gas cost from the native one.
 * Otherwise a HELD result naming what is short.
 */
export function checkFunds(input: {
  nativeCurrency: string;
  nativeBalance: bigint;
  gasCost: bigint;
  value: bigint;
  token?: { currency: string; balance: bigint; amount: bigint };
}): HeldResult | null {
  if (input.token && input.token.balance < input.token.amount) {
    return { status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: input.token.currency, needed: input.token.amount, available: input.token.balance };
  }
  const needed = input.value + input.gasCost;
  if (input.nativeBalance < needed) {
    return { status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: input.nativeCurrency, needed, available: input.nativeBalance };
  }
  return null;
}

/** What the treasury must send a deposit address so it can pay for its token transfer: just the shortfall, nothing more. */
export function gasTopUp(gasLimit: bigint, fees: Fees, nativeBalance: bigint): bigint {
  const needed = maxGasCost(gasLimit, fees);
  return needed > nativeBalance ? needed - nativeBalance : 0n;
}

/**
 * Fees for a token sweep from what the deposit address holds. The top-up was
 * sized as gas limit × the max fee of its time, so the sweep offers that whole
 * allowance as its max fee (capped at twice the market's): EIP-1559 charges
 * only base fee + tip, so this costs nothing more, and a base fee that rose
 * meanwhile is still covered. When the balance no longer covers the current
 * base fee: null, another top-up is needed.
 */
export function sweepFees(gasLimit: bigint, current: Fees, baseFee: bigint, nativeBalance: bigint): Fees | null {
  const affordable = nativeBalance / gasLimit;
  if (affordable >= current.maxFeePerGas) {
    const cap = current.maxFeePerGas * 2n;
    return { maxFeePerGas: affordable < cap ? affordable : cap, maxPriorityFeePerGas: current.maxPriorityFeePerGas };
  }
  if (affordable <= baseFee) return null;
  const priority = affordable - baseFee < current.maxPriorityFeePerGas ? affordable - baseFee : current.maxPriorityFeePerGas;
  return { maxFeePerGas: affordable, maxPriorityFeePerGas: priority };
}

/** A native sweep sends everything but the most the gas can cost; null when that leaves nothing. */
export function nativeSweepValue(balance: bigint, gasLimit: bigint, fees: Fees): bigint | null {
  const value = balance - maxGasCost(gasLimit, fees);
  return value > 0n ? value : null;
}

/**
 * Fees of a replacement (same nonce): nodes accept it only when both fees
 * rise by at least 10 %; take the larger of +12.5 % (rounded up) and the
 * current market fees.
 */
export function bumpedFees(previous: Fees, current: Fees): Fees {
  const bump = (value: bigint) => (value * 1125n + 999n) / 1000n;
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  const maxPriorityFeePerGas = max(bump(previous.maxPriorityFeePerGas), current.maxPriorityFeePerGas);
  const maxFeePerGas = max(max(bump(previous.maxFeePerGas), current.maxFeePerGas), maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}
