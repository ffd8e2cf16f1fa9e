/**
 * The currencies the rates engine prices, and the decimal type it prices them with.
 *
 * The lists repeat server/money/catalog.ts (FIAT_CURRENCIES, CRYPTO_CURRENCIES) because this
 * adapter is built apart from the app while server/ is being restructured; when wiring it, the
 * lead may import the catalog's lists instead (test/adapters/rates/*.unit.test.ts pin the contents).
 */
import { Decimal } from 'decimal.js';

export const FIAT = [
  'AED', 'ARS', 'AUD', 'BDT', 'BGN', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP',
  'HKD', 'HRK', 'HUF', 'IDR', 'ILS', 'INR', 'ISK', 'JPY', 'KES', 'KRW', 'MXN', 'MYR', 'NOK', 'NZD',
  'PEN', 'PHP', 'PLN', 'QAR', 'RON', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'VND', 'ZAR',
] as const;
export type Fiat = (typeof FIAT)[number];

export const CRYPTO = ['BCH', 'BNB', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'TRX', 'USDC', 'USDT', 'XLM', 'XRP'] as const;
export type Crypto = (typeof CRYPTO)[number];

export type Currency = Fiat | Crypto;

export const isFiat = (code: string): code is Fiat => (FIAT as readonly string[]).includes(code);
export const isCrypto = (code: string): code is Crypto => (CRYPTO as readonly string[]).includes(code);

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
