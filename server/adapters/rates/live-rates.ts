/**
 * The `rate()` the app prices with, in live mode: quotes read from the store (shared by every
 * process, kept in memory for `cacheMs`), turned into a rate by quorum.rules.ts. Also the peg
 * of USDT/USDC and the `status()` behind GET /v1/rates.
 */
import { RateDecimal, type Currency } from './currencies.js';
import type { Quote } from './quote.js';
import { DEFAULT_POLICY, peggedRate, resolveRate, type PeggedRate, type QuorumPolicy, type Rate, type Stablecoin } from './quorum.rules.js';
import { loadQuotes, loadSourceRows, type Sql } from './store.js';

export type LiveRatesOptions = {
  sql: Sql;
  /** Source names configured (KASSA_RATE_SOURCES), listed by status() even before their first round. */
  sources: readonly string[];
  policy?: Partial<QuorumPolicy>;
  /** How long quotes read from the database are reused; default 2000 ms. */
  cacheMs?: number;
  now?: () => Date;
};

export type SourceStatus = {
  name: string;
  /** Newest stored quote of the source; null before its first successful round. */
  lastQuoteAt: string | null;
  /** Seconds since lastQuoteAt (whole seconds); null when there is none. */
  ageS: number | null;
  /** Younger than maxAgeS: its quotes count towards a quorum. */
  fresh: boolean;
  quotes: number;
  lastError: string | null;
  lastFailureAt: string | null;
  consecutiveFailures: number;
};

export type RatesStatus = {
  minSources: number;
  maxAgeS: number;
  sources: SourceStatus[];
};

export class LiveRates {
  readonly policy: QuorumPolicy;
  private readonly sql: Sql;
  private readonly sourceNames: readonly string[];
  private readonly cacheMs: number;
  private readonly now: () => Date;
  private cache: { loadedAt: number; quotes: Promise<Quote[]> } | null = null;

  constructor(options: LiveRatesOptions) {
    this.sql = options.sql;
    this.sourceNames = options.sources;
    this.policy = { ...DEFAULT_POLICY, ...options.policy };
    this.cacheMs = options.cacheMs ?? 2000;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Units of `to` worth one unit of `from`, at full precision; throws RatesUnavailable without a
   * quorum. The store holds only the latest quotes, so the rate is today's market: `_at` is
   * accepted for the port's signature and not used to look back in time.
   */
  async rate(from: Currency, to: Currency, _at?: Date): Promise<RateDecimal> {
    return (await this.quote(from, to)).rate;
  }

  /** The rate with what it stands on (sources, prices, oldest quote time, pivot): store it with the payment. */
  async quote(from: Currency, to: Currency): Promise<Rate> {
    const now = this.now();
    return resolveRate(await this.quotes(now), from, to, now, this.policy);
  }

  /** A stablecoin's pegged (1 USD) and market values in `to`, for the depeg-loss fields. */
  async pegged(stable: Stablecoin, to: Currency): Promise<PeggedRate> {
    const now = this.now();
    return peggedRate(await this.quotes(now), stable, to, now, this.policy);
  }

  /** Per configured source: age of its newest quote, freshness, last error. */
  async status(): Promise<RatesStatus> {
    const now = this.now();
    const rows = new Map((await loadSourceRows(this.sql)).map((r) => [r.source, r]));
    const sources = this.sourceNames.map((name): SourceStatus => {
      const r = rows.get(name);
      const at = r?.newestQuoteAt ?? null;
      const ageMs = at ? now.getTime() - at.getTime() : null;
      return {
        name,
        lastQuoteAt: at?.toISOString() ?? null,
        ageS: ageMs === null ? null : Math.max(0, Math.floor(ageMs / 1000)),
        fresh: ageMs !== null && ageMs < this.policy.maxAgeS * 1000,
        quotes: r?.quoteCount ?? 0,
        lastError: r?.lastError ?? null,
        lastFailureAt: r?.lastFailureAt?.toISOString() ?? null,
        consecutiveFailures: r?.consecutiveFailures ?? 0,
      };
    });
    return { minSources: this.policy.minSources, maxAgeS: this.policy.maxAgeS, sources };
  }

  /** Forget the cached quotes (tests; after a manual refresh). */
  invalidate(): void {
    this.cache = null;
  }

  private quotes(now: Date): Promise<Quote[]> {
    const t = Date.now();
    if (!this.cache || t - this.cache.loadedAt > this.cacheMs) {
      // Only quotes that may still be fresh are read; the rules judge them exactly.
      const since = new Date(now.getTime() - this.policy.maxAgeS * 1000);
      const loading = loadQuotes(this.sql, since);
      this.cache = { loadedAt: t, quotes: loading };
      // A failed read is not cached: the next call reads again.
      loading.catch(() => {
        if (this.cache?.quotes === loading) this.cache = null;
      });
    }
    return this.cache.quotes.then((q) => q.filter((x) => this.sourceNames.includes(x.source)));
  }
}
