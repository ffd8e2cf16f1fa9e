/**
 * The currencies the rates engine prices — the catalog's — and the decimal type it prices them with.
 */
import { Decimal } from 'decimal.js';
import { CRYPTO_CURRENCIES, FIAT_CURRENCIES, type CryptoCurrency, type FiatCurrency } from '../../modules/money/index.js';

export const FIAT = FIAT_CURRENCIES;
export type Fiat = FiatCurrency;

export const CRYPTO = CRYPTO_CURRENCIES;
export type Crypto = CryptoCurrency;

export type Currency = Fiat | Crypto;

export { isCrypto, isFiat } from '../../modules/money/index.js';

/**
 * Same configuration as the app's `Dec` (server/money/decimal.ts): 60 significant digits,
 * half-even. A rate computed here converts losslessly with `new Dec(rate)`.
 */
export const RateDecimal = Decimal.clone({
  precision: 60,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -100,
  toExpPos: 100,
});
export type RateDecimal = InstanceType<typeof RateDecimal>;

/** A price as a plain decimal string: digits, one optional point, no sign, no exponent. */
const PRICE_RE = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * Parse a provider's price text; null when it is not a positive plain decimal. Providers send
 * strings (Coinbase, Kraken) or JSON numbers kept as their source text (CoinGecko, see
 * lossless-json.rules.ts); an exponent form (`1.2e-7`) is accepted there too.
 */
export function parsePrice(text: unknown): RateDecimal | null {
  if (typeof text !== 'string') return null;
  const t = text.trim();
  if (!PRICE_RE.test(t) && !/^(0|[1-9][0-9]*)(\.[0-9]+)?[eE][+-]?[0-9]+$/.test(t)) return null;
  const value = new RateDecimal(t);
  return value.isFinite() && value.gt(0) ? value : null;
}
