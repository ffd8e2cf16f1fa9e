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

/**
 * drizzle sends every query not built with `.prepare(name)` as an unnamed
 * statement, which PostgreSQL parses and plans again each time and whose row
 * description postgres.js decodes again each time. This hands drizzle a
 * postgres.js client (and transaction and savepoint clients) that prepares
 * every parameterised query instead: postgres.js keeps one named statement
 * per query text and connection, and re-prepares on its own after a schema
 * change. Queries without parameters (migrations) keep the simple protocol.
 * (Behind PgBouncer in transaction mode, postgres.js needs `prepare: false`
 * for its own queries anyway: Kassa expects a direct or session-pooled
 * connection.)
 */
/** `in ($1, $2, …)`: one text per list length, so left unnamed rather than one statement per length per connection. */
const VARIABLE_LIST = / in \(\$\d+, \$/;

function preparing<T extends postgres.Sql | postgres.TransactionSql>(client: T): T {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (query: string, args?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) =>
          target.unsafe(query, args, args?.length && !VARIABLE_LIST.test(query) ? { ...options, prepare: true } : options);
      }
      if (property === 'begin' || property === 'savepoint') {
        return (...args: unknown[]) => {
          const callback = args.pop() as (tx: postgres.TransactionSql) => unknown;
          return (Reflect.get(target, property) as (...a: unknown[]) => unknown).call(target, ...args, (tx: postgres.TransactionSql) => callback(preparing(tx)));
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

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
  const db = drizzle(preparing(sql), { schema });
  return { sql, db, url, close: () => sql.end({ timeout: 5 }) };
}

/**
 * A drizzle query prepared once per pool (`build` calls `.prepare(name)`):
 * its SQL is built on first use and only executed after, for the hot paths
 * where drizzle's query building costs more than the query.
 */
export function preparedPerPool<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const prepared = new WeakMap<Db, Q>();
  return (db) => {
    let query = prepared.get(db);
    if (!query) prepared.set(db, (query = build(db)));
    return query;
  };
}
