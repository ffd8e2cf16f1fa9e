/**
 * Coinbase: `GET {base}/v2/exchange-rates?currency=<FIAT>`, public, no key. The answer
 * `{"data":{"currency":"EUR","rates":{"BTC":"0.0000171",…}}}` gives, per crypto, the crypto
 * worth one unit of the fiat, as a string; the quote is its inverse (fiat per crypto), computed
 * in decimals. One request per fiat, a few at a time.
 */
import { CRYPTO, FIAT, RateDecimal, type Fiat } from './currencies.js';
import { isObject } from './http.js';
import { HttpRateSource } from './http-source.js';
import { MalformedResponseError, ProviderError, RateLimitedError, RateSourceError, type FetchResult, type Quote, type SourceOptions } from './quote.js';

export const COINBASE_DEFAULT_URL = 'https://api.coinbase.com';

/** Significant digits kept of the inverted rate: far beyond what the provider's strings carry. */
const INVERSE_DIGITS = 30;

export type CoinbaseOptions = SourceOptions & {
  /** Fiats asked for, one request each; default every fiat Kassa prices. */
  fiats?: readonly Fiat[];
  /** Requests in flight at once; default 4. */
  concurrency?: number;
};

export class CoinbaseSource extends HttpRateSource<CoinbaseOptions> {
  constructor(options: CoinbaseOptions = {}) {
    super('coinbase', options, COINBASE_DEFAULT_URL);
  }

  async fetchQuotes(signal?: AbortSignal): Promise<FetchResult> {
    const quotes: Quote[] = [];
    const errors: RateSourceError[] = [];
    // A 429 on any request stops the round: the other requests would only be refused too.
    const stop = new AbortController();
    const combined = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    let rateLimited: RateLimitedError | null = null;
    const fiats = this.options.fiats ?? FIAT;
    const queue = [...fiats];
    const worker = async () => {
      for (let fiat = queue.shift(); fiat !== undefined && !combined.aborted; fiat = queue.shift()) {
        try {
          const got = await this.fetchFiat(fiat, combined);
          quotes.push(...got.quotes);
          errors.push(...got.errors);
        } catch (error) {
          if (error instanceof RateLimitedError) {
            rateLimited ??= error;
            stop.abort();
          } else if (error instanceof RateSourceError) {
            if (!rateLimited) errors.push(error);
          } else {
            throw error;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 4, fiats.length) }, worker));
    if (rateLimited) throw rateLimited;
    // Nothing at all: the round failed, say why (the first problem) instead of answering empty.
    return this.atLeastOne({ quotes, errors }, 'no quotes in any answer');
  }

  private async fetchFiat(fiat: Fiat, signal: AbortSignal): Promise<FetchResult> {
    const { body, at } = await this.get(`/v2/exchange-rates?currency=${encodeURIComponent(fiat)}`, signal);
    if (isObject(body) && Array.isArray(body.errors) && body.errors.length > 0) {
      throw new ProviderError(this.name, body.errors.map((e) => (isObject(e) ? String(e.message ?? e.id) : String(e))));
    }
    const data = isObject(body) ? body.data : undefined;
    if (!isObject(data) || !isObject(data.rates)) throw new MalformedResponseError(this.name, `currency=${fiat}: no data.rates`);
    if (data.currency !== undefined && data.currency !== fiat) {
      throw new MalformedResponseError(this.name, `asked for ${fiat}, answered ${String(data.currency)}`);
    }
    const rates = data.rates;
    // A crypto not listed against this fiat gives no quote, and is not an error.
    const listed = CRYPTO.filter((crypto) => rates[crypto] !== undefined);
    return this.read(
      listed.map((crypto) => ({ base: crypto, quote: fiat, raw: rates[crypto], where: `currency=${fiat}: rates.${crypto}` })),
      at,
      [],
      (perFiat) => new RateDecimal(1).div(perFiat).toSignificantDigits(INVERSE_DIGITS),
    );
  }
}
