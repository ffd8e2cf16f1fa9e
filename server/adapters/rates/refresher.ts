/**
 * The background refresher: every `refreshS` seconds (KASSA_RATES_REFRESH_S, default 30),
 * jittered, each source fetches its quotes and stores them. Each source runs its own loop, so
 * there is never more than one request round in flight per source, and a slow or failing
 * provider delays nobody else. After failures a source backs off exponentially (refreshS × 2ⁿ,
 * capped), and a 429 waits at least its Retry-After. Rounds are claimed in the database
 * (store.ts#claimRound), so several worker processes share one schedule. stop() aborts what is
 * in flight and resolves once every loop is idle.
 */
import { RateLimitedError, type RateSource } from './quote.js';
import { claimRound, recordFailure, recordSuccess, saveQuotes, type Sql } from './store.js';

export type RefresherEvent =
  | { type: 'refreshed'; source: string; quotes: number; partialErrors: string[] }
  | { type: 'failed'; source: string; error: string; consecutiveFailures: number; nextInMs: number }
  | { type: 'skipped'; source: string };

export type RefresherOptions = {
  sql: Sql;
  sources: readonly RateSource[];
  /** Seconds between rounds of one source; default 30. */
  refreshS?: number;
  /** Relative jitter of every delay (±); default 0.1. */
  jitter?: number;
  /** Cap of the backoff delay; default 600 s. */
  maxBackoffS?: number;
  now?: () => Date;
  random?: () => number;
  onEvent?: (event: RefresherEvent) => void;
};

/** Delay before the next round after `failures` consecutive failures (pure; jitter applied by the caller). */
export function nextDelayS(refreshS: number, failures: number, maxBackoffS: number, retryAfterS: number | null): number {
  const base = failures === 0 ? refreshS : Math.min(refreshS * 2 ** failures, maxBackoffS);
  return retryAfterS === null ? base : Math.max(base, retryAfterS);
}

export class RatesRefresher {
  private readonly sql: Sql;
  private readonly sources: readonly RateSource[];
  private readonly refreshS: number;
  private readonly jitter: number;
  private readonly maxBackoffS: number;
  private readonly now: () => Date;
  private readonly random: () => number;
  private readonly onEvent: (event: RefresherEvent) => void;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, number>();
  private abort = new AbortController();
  private running = false;
  /** Bumped by every start(): a round of an earlier run never schedules into a later one. */
  private generation = 0;

  constructor(options: RefresherOptions) {
    this.sql = options.sql;
    this.sources = options.sources;
    this.refreshS = options.refreshS ?? 30;
    this.jitter = options.jitter ?? 0.1;
    this.maxBackoffS = options.maxBackoffS ?? 600;
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? Math.random;
    this.onEvent = options.onEvent ?? (() => {});
  }

  /** Start every source's loop; the first round runs at once. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.generation++;
    this.abort = new AbortController();
    for (const source of this.sources) this.schedule(source, 0);
  }

  /** Stop scheduling, abort requests in flight, and resolve when no round is running. */
  async stop(): Promise<void> {
    this.running = false;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.abort.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * One round of every source now, without claiming (tests, a CLI warm-up); resolves when all
   * are done. Does not start the loops.
   */
  async refreshAll(): Promise<RefresherEvent[]> {
    const events: RefresherEvent[] = [];
    await Promise.all(this.sources.map(async (s) => events.push(await this.round(s, false))));
    return events;
  }

  private schedule(source: RateSource, delayMs: number): void {
    if (!this.running) return;
    const generation = this.generation;
    const timer = setTimeout(() => {
      this.timers.delete(source.name);
      const run = this.round(source, true).then((event) => {
        this.inFlight.delete(source.name);
        if (generation === this.generation) this.schedule(source, this.delayAfter(event));
      });
      this.inFlight.set(source.name, run);
    }, delayMs);
    this.timers.set(source.name, timer);
  }

  private delayAfter(event: RefresherEvent): number {
    const s = event.type === 'failed' ? event.nextInMs / 1000 : this.refreshS;
    return this.jittered(s);
  }

  private jittered(seconds: number): number {
    return Math.round(seconds * 1000 * (1 - this.jitter + 2 * this.jitter * this.random()));
  }

  /** Fetch and store one source's quotes; never throws (a failure is an event and a backoff). */
  private async round(source: RateSource, claim: boolean): Promise<RefresherEvent> {
    const name = source.name;
    try {
      // Another process took this round: wait for the next one like a successful round.
      if (claim && !(await claimRound(this.sql, name, this.now(), this.refreshS / 2))) {
        const event: RefresherEvent = { type: 'skipped', source: name };
        this.onEvent(event);
        return event;
      }
      const result = await source.fetchQuotes(this.abort.signal);
      await saveQuotes(this.sql, result.quotes);
      const partial = result.errors.map((e) => e.message);
      await recordSuccess(this.sql, name, this.now(), result.quotes.length, partial.length ? partial.slice(0, 5).join('; ') : null);
      this.failures.set(name, 0);
      const event: RefresherEvent = { type: 'refreshed', source: name, quotes: result.quotes.length, partialErrors: partial };
      this.onEvent(event);
      return event;
    } catch (error) {
      const failures = (this.failures.get(name) ?? 0) + 1;
      this.failures.set(name, failures);
      const message = error instanceof Error ? error.message : String(error);
      const retryAfterS = error instanceof RateLimitedError ? error.retryAfterS : null;
      // Stopping aborts the request: that is not the provider's failure, record nothing.
      if (!this.abort.signal.aborted) await recordFailure(this.sql, name, this.now(), message).catch(() => {});
      const event: RefresherEvent = {
        type: 'failed',
        source: name,
        error: message,
        consecutiveFailures: failures,
        nextInMs: nextDelayS(this.refreshS, failures, this.maxBackoffS, retryAfterS) * 1000,
      };
      this.onEvent(event);
      return event;
    }
  }
}
