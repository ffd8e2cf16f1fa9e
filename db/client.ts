/**
 * The database handle: one postgres.js pool, wrapped by drizzle for typed
 * queries. `sql` stays available for the places where plain SQL reads
 * better (locks, ledgers, graphile_worker.add_job).
 */
import postgres from 'postgres';
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js';
import { PgDialect, type PgDatabase } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle; every service function that writes takes one. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Sql = postgres.Sql;
/** Either the pool or a transaction: what a function that only queries accepts. */
export type Queryable = PgDatabase<PostgresJsQueryResultHKT, typeof schema>;

export type Database = {
  sql: Sql;
  db: Db;
  url: string;
  /**
   * A second, small pool whose prepared statements always run their generic plan. For the batched
   * statements over arrays (one row per element, `unnest`): their custom plan sees each batch's
   * array sizes, so PostgreSQL judges it cheaper than the generic one and plans every execution
   * again. Not the main pool: there a generic plan cannot use a partial index for a status given
   * as a parameter.
   */
  generic: Sql;
  /**
   * One connection of generic plans for the payment create batches alone. One, so that a batch let
   * out while another is at the database (platform/batch.ts, `pipelined`) waits in the same
   * backend's socket and runs the moment the one ahead commits, instead of waiting for Kassa to read
   * that answer and send it (about half of each batch's cycle), and never runs beside it on a second
   * backend (two batches at once lock the same business row for their foreign keys: a MultiXact).
   */
  creates: Sql;
  close: () => Promise<void>;
};

/**
 * Batches a batcher keeps at the database at once (the creates let a second out behind the first
 * once it is as large, `pipelined` in platform/batch.ts). One: while it is out the next batch gathers, so
 * batches carry more rows and PostgreSQL pays a statement's fixed cost and its commit's flush fewer
 * times. Against 2, alternating 5 s rounds with a load generator that no longer took a third of a
 * core from the machine (bench/load.ts): 2,712 against 2,206 creates/s, PostgreSQL 0.188 against
 * 0.241 ms and Kassa 0.243 against 0.276 ms of CPU a create, every pair the same way; paced at
 * 1,200/s, p99 13.8 against 15.8 ms. (With autocannon's heavier load, 1 to 8 had measured alike.)
 */
export const BATCHES_IN_FLIGHT = 1;
/**
 * Connections of the generic-plan pool: one for each batch in flight of the batcher on it (payment
 * read stamps; the creates have a connection of their own, `Database.creates`).
 */
export const GENERIC_POOL_SIZE = BATCHES_IN_FLIGHT;

/**
 * The rows of a postgres.js query, with its parameters dropped from the query object once it is
 * answered. For the batched statements, whose one parameter is the whole batch as JSON (KBs).
 *
 * Why: under load, answered postgres.js `Query` objects outlive their request until V8's next
 * mark-compact: the young-generation GC promotes them, and with them their parameters. What keeps
 * them is not found (a heap snapshot sees none; README, twelfth round). Measured with 7,500 paced
 * creates: 18.6 MB promoted before, 7.2–7.4 MB after; over six alternating create runs the paced p99
 * was 12.5–27.5 ms (median 16.9) against 20.1–43.0 ms (median 23.8), and the RSS peak 220–236
 * against 180–255 MiB. Nothing reads the parameters after the answer (postgres.js retries a
 * statement only before it is answered).
 */
export async function answered<T>(query: Promise<T>): Promise<T> {
  const rows = await query;
  Object.assign(query, { args: null, parameters: null });
  return rows;
}

export function connect(url: string, options: { max?: number } = {}): Database {
  const open = (max: number, settings: Record<string, string> = {}) => postgres(url, {
    max,
    onnotice: () => {},
    // Fail fast instead of queueing forever when the database is down.
    connect_timeout: 5,
    // Retry a lost server quickly (the default backoff grows to ~20 s, so an outage answers in 15–30 s).
    backoff: () => 0.2,
    idle_timeout: 60,
    connection: { application_name: 'kassa', ...settings },
  });
  const sql = open(options.max ?? 10);
  // postgres.js connects on first use: a process that never runs a batched statement opens none.
  const generic = open(GENERIC_POOL_SIZE, { plan_cache_mode: 'force_generic_plan' });
  const creates = open(1, { plan_cache_mode: 'force_generic_plan' });
  // drizzle sends queries as unnamed statements (planned per execution) unless built with
  // `.prepare(name)`: only a few hot, index-lookup queries are (`preparedPerPool`). Preparing every
  // query was tried: in the soak's mixed load, generic plans made it 35% slower (42.6 vs 66 op/s).
  const db = drizzle(sql, { schema });
  return { sql, db, url, generic, creates, close: async () => void (await Promise.all([sql.end({ timeout: 5 }), generic.end({ timeout: 5 }), creates.end({ timeout: 5 })])) };
}

/**
 * A drizzle query prepared once per pool (`build` calls `.prepare(name)`):
 * its SQL is built on first use and only executed after, for the hot paths
 * where drizzle's query building costs more than the query. Also anything
 * else a pool keeps for its life (a batcher of statements, keyed by its
 * `Database`).
 */
export function preparedPerPool<Q, Pool extends object = Db>(build: (pool: Pool) => Q): (pool: Pool) => Q {
  const prepared = new WeakMap<Pool, Q>();
  return (pool) => {
    let query = prepared.get(pool);
    if (!query) prepared.set(pool, (query = build(pool)));
    return query;
  };
}

const dialect = new PgDialect();

/**
 * Run SQL built with drizzle's `sql` as a named prepared statement (postgres.js
 * keeps one per text and connection): for hot statements drizzle cannot
 * `.prepare()`, such as a CTE written in SQL. Its parameters must be driver
 * values already (strings, numbers, booleans, null).
 */
export function executePrepared<Row>(database: Database, query: SQL): Promise<Row[]> {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return database.sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true }) as unknown as Promise<Row[]>;
}
