/**
 * What every HTTP rate source shares, so each source file keeps only its URL and its answer's
 * format: the endpoint (base URL, timeout, clock), one GET of the provider's JSON stamped with
 * the time of the answer (http.ts types its failures), and the reading of the raw prices a source
 * found into quotes, a price that does not parse becoming an error rather than a guess.
 */
import { parsePrice, type Crypto, type Fiat, type RateDecimal } from './currencies.js';
import { getJson } from './http.js';
import { DEFAULT_TIMEOUT_MS, MalformedResponseError, type FetchResult, type Quote, type RateSource, type RateSourceError, type SourceOptions } from './quote.js';

/** A price as the provider wrote it, for one pair; `where` names its place in the answer (for errors). */
export type RawPrice = { base: Crypto; quote: Fiat; raw: unknown; where: string };

/** A source named `name`, built with its `options` (read by each source for its own settings). */
export abstract class HttpRateSource<O extends SourceOptions = SourceOptions> implements RateSource {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => Date;

  constructor(
    readonly name: string,
    protected readonly options: O,
    defaultUrl: string,
  ) {
    this.baseUrl = (options.baseUrl ?? defaultUrl).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
  }

  abstract fetchQuotes(signal?: AbortSignal): Promise<FetchResult>;

  /** GET `{baseUrl}{pathAndQuery}`; `at` is when the answer came, the time its quotes carry. */
  protected async get(pathAndQuery: string, signal?: AbortSignal): Promise<{ body: unknown; at: Date }> {
    const body = await getJson(`${this.baseUrl}${pathAndQuery}`, { source: this.name, timeoutMs: this.timeoutMs, signal });
    return { body, at: this.now() };
  }

  /**
   * The quotes of the prices found (`toPrice` turns a parsed price into fiat per crypto where the
   * provider writes it otherwise); `errors` holds what was already wrong with the answer.
   */
  protected read(
    found: Iterable<RawPrice>,
    at: Date,
    errors: RateSourceError[] = [],
    toPrice: (parsed: RateDecimal) => RateDecimal = (parsed) => parsed,
  ): FetchResult {
    const quotes: Quote[] = [];
    for (const { base, quote, raw, where } of found) {
      const parsed = parsePrice(raw);
      if (!parsed) errors.push(new MalformedResponseError(this.name, `${where} = ${JSON.stringify(raw)}`));
      else quotes.push({ source: this.name, base, quote, price: toPrice(parsed).toString(), at });
    }
    return { quotes, errors };
  }

  /** A result with no quote at all is a failed round: throw why (its first problem, or `nothing`). */
  protected atLeastOne(result: FetchResult, nothing: string): FetchResult {
    if (result.quotes.length === 0) throw result.errors[0] ?? new MalformedResponseError(this.name, nothing);
    return result;
  }
}
