/** Whole-coin decimal strings ⇄ base units (10^8), exactly. */
import { Decimal } from 'decimal.js';
import { DECIMALS } from './params.js';

const UNIT = new Decimal(10).pow(DECIMALS);

/** "1.5" → 150000000n. Refuses more than 8 decimals, negatives and non-numbers. */
export function toBaseUnits(amount: string): bigint {
  if (!/^\d+(\.\d+)?$/.test(amount.trim())) throw new Error(`not a non-negative decimal amount: "${amount}"`);
  const units = new Decimal(amount.trim()).mul(UNIT);
  if (!units.isInteger()) throw new Error(`amount "${amount}" has more than ${DECIMALS} decimals`);
  return BigInt(units.toFixed(0));
}

/** 150000000n → "1.5" (no trailing zeros, no exponent). */
export function fromBaseUnits(units: bigint): string {
  return new Decimal(units.toString()).div(UNIT).toFixed();
}
