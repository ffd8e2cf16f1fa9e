/**
 * Provider answers in their documented public formats, trimmed to a few currencies.
 * Coinbase: https://docs.cdp.coinbase.com/coinbase-app/track-apis/exchange-rates (data.currency,
 * data.rates as strings, crypto per one unit of the base currency). Kraken: REST Ticker
 * (error array, result keyed by pair name; a/b/c/v/p/t/l/h/o, c = [last price, lot volume]).
 * CoinGecko: /simple/price (id → vs_currency → JSON number).
 */

/** GET /v2/exchange-rates?currency=<fiat>, with the given crypto-per-fiat rates plus fiat noise. */
export function coinbaseRates(currency: string, rates: Record<string, string>): unknown {
  return { data: { currency, rates: { AED: '3.9846', EUR: '0.9212', GBP: '0.7891', USD: '1.0', ...rates } } };
}

/** Coinbase's error body (v2 API). */
export const coinbaseError = (id: string, message: string) => ({ errors: [{ id, message }] });

/** One Kraken ticker object whose last trade is `last`. */
export function krakenTicker(last: string): unknown {
  return {
    a: [last, '1', '1.000'],
    b: [last, '2', '2.000'],
    c: [last, '0.00110000'],
    v: ['1043.92815498', '2218.16493271'],
    p: [last, last],
    t: [21034, 41733],
    l: [last, last],
    h: [last, last],
    o: last,
  };
}

export function krakenTickerAnswer(lasts: Record<string, string>): unknown {
  return { error: [], result: Object.fromEntries(Object.entries(lasts).map(([k, v]) => [k, krakenTicker(v)])) };
}

export const COINGECKO_429 = {
  status: {
    error_code: 429,
    error_message:
      "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits.",
  },
};
