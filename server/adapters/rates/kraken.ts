/**
 * Kraken: `GET {base}/0/public/Ticker?pair=<PAIRS>`, public. The answer is
 * `{"error":[],"result":{"XXBTZEUR":{"a":[…],"b":[…],"c":["57012.10000","0.0012"],…}}}`;
 * the quote is the last trade price `c[0]`.
 *
 * Kraken's naming: Bitcoin is XBT; the request takes the pair's altname (`XBTEUR`), but the
 * answer keys older pairs by their legacy name, X-prefixed crypto and Z-prefixed fiat
 * (`XXBTZEUR`, `XETHZUSD`, `XLTCZEUR`, `XXRPZUSD`, `XXLMZEUR`), newer ones by the altname
 * (`SOLEUR`, `LINKUSD`, `USDCEUR`), and a few mix them (`USDTZUSD`). So each requested pair is
 * recognised under every one of those spellings. A pair Kraken does not list fails the whole
 * request (`EQuery:Unknown asset pair`), hence a fixed default list of listed pairs.
 */
import { parsePrice, type Crypto, type Fiat } from './currencies.js';
import { getJson, isObject } from './http.js';
import {
  DEFAULT_TIMEOUT_MS,
  MalformedResponseError,
  ProviderError,
  type FetchResult,
  type Quote,
  type RateSource,
  type RateSourceError,
  type SourceOptions,
} from './quote.js';

export const KRAKEN_DEFAULT_URL = 'https://api.kraken.com';

export type KrakenPair = { base: Crypto; quote: Fiat };

/**
 * Pairs asked for by default: every Kassa crypto Kraken trades against USD and EUR, and BTC/ETH
 * against GBP. BNB is not traded on Kraken, so it is absent.
 */
export const KRAKEN_DEFAULT_PAIRS: readonly KrakenPair[] = [
  ...(['BTC', 'ETH', 'LTC', 'BCH', 'XRP', 'XLM', 'SOL', 'LINK', 'TRX', 'USDT', 'USDC'] as const).flatMap((base) =>
    (['USD', 'EUR'] as const).map((quote) => ({ base, quote })),
  ),
  { base: 'BTC', quote: 'GBP' },
  { base: 'ETH', quote: 'GBP' },
];

/** Kraken's asset code for a Kassa ticker. */
export const krakenAsset = (crypto: Crypto): string => (crypto === 'BTC' ? 'XBT' : crypto);

/** The altname sent in `pair=` for a pair. */
export const krakenAltname = (pair: KrakenPair): string => `${krakenAsset(pair.base)}${pair.quote}`;

/** Every key Kraken may answer a pair under (see the header). */
export function krakenResultKeys(pair: KrakenPair): string[] {
  const a = krakenAsset(pair.base);
  const f = pair.quote;
  return [`${a}${f}`, `X${a}Z${f}`, `${a}Z${f}`, `X${a}${f}`];
}

export type KrakenOptions = SourceOptions & { pairs?: readonly KrakenPair[] };

export class KrakenSource implements RateSource {
  readonly name = 'kraken';
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private readonly pairs: readonly KrakenPair[];

  constructor(options: KrakenOptions = {}) {
    this.baseUrl = (options.baseUrl ?? KRAKEN_DEFAULT_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
    this.pairs = options.pairs ?? KRAKEN_DEFAULT_PAIRS;
  }

  async fetchQuotes(signal?: AbortSignal): Promise<FetchResult> {
    // Commas stay literal: Kraken documents `pair=XBTUSD,ETHEUR`.
    const url = `${this.baseUrl}/0/public/Ticker?pair=${this.pairs.map(krakenAltname).join(',')}`;
    const body = await getJson(url, { source: this.name, timeoutMs: this.timeoutMs, signal });
    const at = this.now();
    if (!isObject(body) || !Array.isArray(body.error)) throw new MalformedResponseError(this.name, 'no error array');
    // Kraken prefixes errors with E and warnings with W; a warning alone does not void the result.
    const errorsSaid = body.error.map(String).filter((e) => !e.startsWith('W'));
    if (errorsSaid.length > 0) throw new ProviderError(this.name, errorsSaid);
    if (!isObject(body.result)) throw new MalformedResponseError(this.name, 'no result object');
    const result = body.result;
    const quotes: Quote[] = [];
    const errors: RateSourceError[] = [];
    for (const pair of this.pairs) {
      const key = krakenResultKeys(pair).find((k) => k in result);
      if (key === undefined) continue; // not in the answer: no quote
      const ticker = result[key];
      const last = isObject(ticker) && Array.isArray(ticker.c) ? ticker.c[0] : undefined;
      const price = parsePrice(last);
      if (!price) {
        errors.push(new MalformedResponseError(this.name, `${key}.c[0] = ${JSON.stringify(last)}`));
        continue;
      }
      quotes.push({ source: this.name, base: pair.base, quote: pair.quote, price: price.toString(), at });
    }
    if (quotes.length === 0) throw errors[0] ?? new MalformedResponseError(this.name, 'no requested pair in result');
    return { quotes, errors };
  }
}
