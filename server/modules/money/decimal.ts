/**
 * Exact decimal arithmetic for money. Amounts cross the API as strings, live
 * in PostgreSQL as `numeric`, and are computed as `Dec` in between; a JS
 * number never holds an amount.
 *
 * Rounding, written down once:
 * - Everything is computed at full precision (60 significant digits) and
 *   rounded once, when an amount is stored or shown, to the decimals of its
 *   currency (ISO 4217 minor units for fiat, CRYPTO_DECIMALS for crypto).
 * - An amount the end user must pay (`expectedDepositAmount`) rounds UP, so
 *   paying exactly what is shown always covers the price; so does the part of
 *   a deposit an EXCESS_REFUND payment still takes (deposits/deposit.service.ts).
 * - What a withdrawal takes from the balance (`deductedSettlementAmount`)
 *   rounds UP, and a payout asked for in fiat rounds DOWN to the coin: the
 *   balance always covers what is sent, which never exceeds what was asked.
 * - An amount received (a deposit's `depositAmount`, a payment's
 *   `actualDepositAmount`) rounds DOWN: a token with more decimals on chain
 *   than Kassa shows (USDT on BSC: 18) never looks like more than arrived.
 * - Every other amount (values, fees, refunds) rounds HALF_EVEN (banker's
 *   rounding), which does not drift in sums. A deposit's payable amount is
 *   its value as shown minus its fee as shown, so the two add up.
 */
import { Decimal as DecimalJs } from 'decimal.js';
import { decimalsOf, isCrypto, isFiat, type CryptoCurrency, type FiatCurrency } from './catalog.js';

export const Dec = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 });
export type Dec = InstanceType<typeof Dec>;

export type Rounding = 'HALF_EVEN' | 'UP' | 'DOWN';
const MODES: Record<Rounding, DecimalJs.Rounding> = {
  HALF_EVEN: DecimalJs.ROUND_HALF_EVEN,
  UP: DecimalJs.ROUND_UP,
  DOWN: DecimalJs.ROUND_DOWN,
};

/** The largest amount any request may carry: far above any real payment, far below numeric limits. */
export const MAX_AMOUNT = new Dec('1e15');

const AMOUNT_RE = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export type AmountProblem = 'FORMAT' | 'NOT_POSITIVE' | 'TOO_MANY_DECIMALS' | 'TOO_LARGE';

/** Parse a positive decimal string with at most `decimals` fraction digits. */
export function parseAmount(text: string, decimals: number): { ok: true; value: Dec } | { ok: false; problem: AmountProblem } {
  if (!AMOUNT_RE.test(text)) return { ok: false, problem: 'FORMAT' };
  const fraction = text.split('.')[1] ?? '';
  if (fraction.length > decimals) return { ok: false, problem: 'TOO_MANY_DECIMALS' };
  const value = new Dec(text);
  if (value.lte(0)) return { ok: false, problem: 'NOT_POSITIVE' };
  if (value.gt(MAX_AMOUNT)) return { ok: false, problem: 'TOO_LARGE' };
  return { ok: true, value };
}

/** Round to the currency's decimals. */
export function roundTo(value: Dec, currency: FiatCurrency | CryptoCurrency, rounding: Rounding = 'HALF_EVEN'): Dec {
  return value.toDecimalPlaces(decimalsOf(currency), MODES[rounding]);
}

/**
 * The API form of an amount: fiat with exactly its minor units ("10.50"),
 * crypto with its decimals but without trailing zeros ("0.0025", not
 * "0.002500000000000000").
 */
export function formatAmount(value: Dec | string, currency: FiatCurrency | CryptoCurrency, rounding: Rounding = 'HALF_EVEN'): string {
  const rounded = roundTo(new Dec(value), currency, rounding);
  const fixed = rounded.toFixed(decimalsOf(currency));
  if (!isCrypto(currency) || !fixed.includes('.')) return fixed;
  return fixed.replace(/\.?0+$/, '');
}

/** Like formatAmount, for any currency code: unknown ones (delisted tokens) keep up to 18 decimals. */
export function formatAnyAmount(value: Dec | string, currency: string, rounding: Rounding = 'HALF_EVEN'): string {
  if (isFiat(currency) || isCrypto(currency)) return formatAmount(value, currency, rounding);
  const fixed = new Dec(value).toDecimalPlaces(18, MODES[rounding]).toFixed(18);
  return fixed.replace(/\.?0+$/, '');
}
