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
 * request (`EQuery:Unknown asset pair`): the default list holds listed pairs only, and should
 * one be delisted, the source finds it by asking pair by pair and leaves it out.
 */
import type { Crypto, Fiat } from './currencies.js';
import { isObject } from './http.js';
import { HttpRateSource, type RawPrice } from './http-source.js';
import { MalformedResponseError, ProviderError, RateLimitedError, RateSourceError, type FetchResult, type Quote, type SourceOptions } from './quote.js';

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

export class KrakenSource extends HttpRateSource<KrakenOptions> {
  constructor(options: KrakenOptions = {}) {
    super('kraken', options, KRAKEN_DEFAULT_URL);
  }

  /** Pairs Kraken answered "Unknown asset pair" for, left out of later rounds. */
  private readonly unlisted = new Set<string>();

  async fetchQuotes(signal?: AbortSignal): Promise<FetchResult> {
    const pairs = (this.options.pairs ?? KRAKEN_DEFAULT_PAIRS).filter((p) => !this.unlisted.has(krakenAltname(p)));
    if (pairs.length === 0) throw new MalformedResponseError(this.name, 'every configured pair is unknown to Kraken');
    try {
      return await this.fetchPairs(pairs, signal);
    } catch (error) {
      // One delisted pair fails the whole request: find it by asking each pair alone, once, and
      // leave it out from then on (reported), instead of losing the source for good.
      if (!(isUnknownPair(error) && pairs.length > 1)) throw error;
      const quotes: Quote[] = [];
      const errors: RateSourceError[] = [];
      for (const pair of pairs) {
        try {
          const got = await this.fetchPairs([pair], signal);
          quotes.push(...got.quotes);
          errors.push(...got.errors);
        } catch (e) {
          if (e instanceof RateLimitedError || !(e instanceof RateSourceError)) throw e;
          if (isUnknownPair(e)) this.unlisted.add(krakenAltname(pair));
          errors.push(e);
        }
      }
      if (quotes.length === 0) throw errors[0] ?? error;
      return { quotes, errors };
    }
  }

  private async fetchPairs(pairs: readonly KrakenPair[], signal?: AbortSignal): Promise<FetchResult> {
    // Commas stay literal: Kraken documents `pair=XBTUSD,ETHEUR`.
    const { body, at } = await this.get(`/0/public/Ticker?pair=${pairs.map(krakenAltname).join(',')}`, signal);
    if (!isObject(body) || !Array.isArray(body.error)) throw new MalformedResponseError(this.name, 'no error array');
    // Kraken prefixes errors with E and warnings with W; a warning alone does not void the result.
    const errorsSaid = body.error.map(String).filter((e) => !e.startsWith('W'));
    if (errorsSaid.length > 0) throw new ProviderError(this.name, errorsSaid);
    if (!isObject(body.result)) throw new MalformedResponseError(this.name, 'no result object');
    const result = body.result;
    const found: RawPrice[] = [];
    for (const pair of pairs) {
      const key = krakenResultKeys(pair).find((k) => k in result);
      if (key === undefined) continue; // not in the answer: no quote
      const ticker = result[key];
      const last = isObject(ticker) && Array.isArray(ticker.c) ? ticker.c[0] : undefined;
      found.push({ base: pair.base, quote: pair.quote, raw: last, where: `${key}.c[0]` });
    }
    return this.atLeastOne(this.read(found, at), 'no requested pair in result');
  }
}

const isUnknownPair = (error: unknown): boolean =>
  error instanceof ProviderError && error.errors.some((e) => e.startsWith('EQuery:Unknown asset pair'));
