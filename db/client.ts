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

export type Database = { sql: Sql; db: Db; url: string; close: () => Promise<void> };

export function connect(url: string, options: { max?: number } = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // Fail fast instead of queueing forever when the database is down.
    connect_timeout: 5,
    // Retry a lost server quickly (the default backoff grows to ~20 s, so an outage answers in 15–30 s).
    backoff: () => 0.2,
    idle_timeout: 60,
    connection: { application_name: 'kassa' },
  });
  // drizzle sends queries as unnamed statements (planned per execution) unless built with
  // `.prepare(name)`: only a few hot, index-lookup queries are (`preparedPerPool`). Preparing every
  // query was tried: in the soak's mixed load, generic plans made it 35% slower (42.6 vs 66 op/s).
  const db = drizzle(sql, { schema });
  return { sql, db, url, close: () => sql.end({ timeout: 5 }) };
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
