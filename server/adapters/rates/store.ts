/**
 * Quotes in PostgreSQL (tables `rate_quotes` and `rate_sources`, migration 0004): the refresher writes the latest quote per
 * source/base/quote with its fetch time, every web process reads them. Plain SQL over a
 * postgres.js handle, so the adapter needs nothing of the app but a connection.
 */
import type postgres from 'postgres';
import type { Crypto, Fiat } from './currencies.js';
import type { Quote } from './quote.js';

export type Sql = postgres.Sql;

/**
 * A timestamptz as ISO text, read back with `new Date`: the same whatever type parsers the
 * connection was given (drizzle's postgres-js driver, for one, turns timestamps into strings).
 */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const date = (text: string | null): Date | null => (text === null ? null : new Date(text));

/**
 * Upsert quotes in one statement. A row is only replaced by a newer one, so a slow round of one
 * process never overwrites what a faster one already stored.
 */
export async function saveQuotes(sql: Sql, quotes: readonly Quote[]): Promise<void> {
  if (quotes.length === 0) return;
  // One JSON parameter for the whole batch; prices travel as strings, so numeric gets every digit.
  const rows = quotes.map((q) => ({ source: q.source, base: q.base, quote: q.quote, price: q.price, fetched_at: q.at.toISOString() }));
  await sql`
    insert into rate_quotes (source, base, quote, price, fetched_at)
    select source, base, quote, price, fetched_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as x(source text, base text, quote text, price numeric, fetched_at timestamptz)
    on conflict (source, base, quote) do update
      set price = excluded.price, fetched_at = excluded.fetched_at
      where rate_quotes.fetched_at < excluded.fetched_at`;
}

/** Every stored quote fetched after `since` (the quorum rules judge freshness themselves). */
export async function loadQuotes(sql: Sql, since: Date): Promise<Quote[]> {
  const rows = await sql<{ source: string; base: string; quote: string; price: string; fetched_at: string }[]>`
    select source, base, quote, price::text as price, ${sql.unsafe(iso('fetched_at'))} as fetched_at
    from rate_quotes where fetched_at > ${since.toISOString()}::timestamptz`;
  return rows.map((r) => ({ source: r.source, base: r.base as Crypto, quote: r.quote as Fiat, price: r.price, at: new Date(r.fetched_at) }));
}

/**
 * Claim a round of `source` for this process: true when no process attempted one in the last
 * `minIntervalS` seconds. Several worker processes then share one schedule instead of each
 * calling the provider.
 */
export async function claimRound(sql: Sql, source: string, now: Date, minIntervalS: number): Promise<boolean> {
  const rows = await sql`
    insert into rate_sources (source, last_attempt_at) values (${source}, ${now.toISOString()}::timestamptz)
    on conflict (source) do update set last_attempt_at = excluded.last_attempt_at
      where rate_sources.last_attempt_at is null
         or rate_sources.last_attempt_at <= excluded.last_attempt_at - make_interval(secs => ${minIntervalS})
    returning source`;
  return rows.length === 1;
}

export async function recordSuccess(sql: Sql, source: string, at: Date, quoteCount: number, partialError: string | null): Promise<void> {
  await sql`
    insert into rate_sources (source, last_success_at, quote_count, consecutive_failures, last_error)
    values (${source}, ${at.toISOString()}::timestamptz, ${quoteCount}, 0, ${partialError})
    on conflict (source) do update
      set last_success_at = excluded.last_success_at, quote_count = excluded.quote_count,
          consecutive_failures = 0, last_error = excluded.last_error`;
}

export async function recordFailure(sql: Sql, source: string, at: Date, error: string): Promise<void> {
  await sql`
    insert into rate_sources (source, last_failure_at, last_error, consecutive_failures)
    values (${source}, ${at.toISOString()}::timestamptz, ${error}, 1)
    on conflict (source) do update
      set last_failure_at = excluded.last_failure_at, last_error = excluded.last_error,
          consecutive_failures = rate_sources.consecutive_failures + 1`;
}

export type SourceRow = {
  source: string;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastError: string | null;
  consecutiveFailures: number;
  quoteCount: number;
  newestQuoteAt: Date | null;
};

/** Each source's last rounds and its newest stored quote. */
export async function loadSourceRows(sql: Sql): Promise<SourceRow[]> {
  const rows = await sql<
    {
      source: string;
      last_success_at: string | null;
      last_failure_at: string | null;
      last_error: string | null;
      consecutive_failures: number | null;
      quote_count: number | null;
      newest: string | null;
    }[]
  >`
    select coalesce(s.source, q.source) as source, ${sql.unsafe(iso('s.last_success_at'))} as last_success_at,
           ${sql.unsafe(iso('s.last_failure_at'))} as last_failure_at, s.last_error,
           s.consecutive_failures, s.quote_count, ${sql.unsafe(iso('q.newest'))} as newest
    from rate_sources s
    full join (select source, max(fetched_at) as newest from rate_quotes group by source) q on q.source = s.source
    order by 1`;
  return rows.map((r) => ({
    source: r.source,
    lastSuccessAt: date(r.last_success_at),
    lastFailureAt: date(r.last_failure_at),
    lastError: r.last_error,
    consecutiveFailures: r.consecutive_failures ?? 0,
    quoteCount: r.quote_count ?? 0,
    newestQuoteAt: date(r.newest),
  }));
}
