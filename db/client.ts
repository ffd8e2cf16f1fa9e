/**
 * The database handle: one postgres.js pool, wrapped by drizzle for typed
 * queries. `sql` stays available for the places where plain SQL reads
 * better (locks, ledgers, graphile_worker.add_job).
 */
import postgres from 'postgres';
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js';
import type { PgDatabase } from 'drizzle-orm/pg-core';
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
  const db = drizzle(sql, { schema });
  return { sql, db, url, close: () => sql.end({ timeout: 5 }) };
}
