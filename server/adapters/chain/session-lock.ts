/**
 * One pass of a chain engine at a time per network, across processes: a PostgreSQL session-level
 * advisory lock, held on a connection of the pool reserved for the pass (no transaction stays open
 * across the node calls the pass makes).
 *
 * postgres.js 3.4.9 can strand a `reserve()` for ever: when the pooled connection it is handed is
 * closed meanwhile (porsager/postgres#1195), the promise never settles. Kassa's pools close idle
 * connections after 60 s, and the signer's payouts pass runs every 60 s: passes hung within a few
 * minutes, every network's behind them. So a query runs first (the pool then has an open connection,
 * its idle timer just restarted, which `reserve()` takes at once), and a reserve that still does not
 * come within `timeoutMs` is an error the next pass retries (a connection it yields later is released).
 */
import type postgres from 'postgres';
import { withTimeout } from '../../platform/with-timeout.js';

export class ReserveTimeoutError extends Error {
  override name = 'ReserveTimeoutError';
}

/** A connection of `sql`'s pool to oneself, or ReserveTimeoutError after `timeoutMs`. */
export async function reserveConnection(sql: postgres.Sql, timeoutMs = 10_000): Promise<postgres.ReservedSql> {
  await sql`select 1`;
  const reserving = sql.reserve();
  try {
    return await withTimeout(reserving, timeoutMs, () => new ReserveTimeoutError(`no database connection could be reserved within ${timeoutMs} ms`));
  } catch (error) {
    reserving.then((late) => late.release(), () => {});
    throw error;
  }
}

/**
 * Run `pass` holding the advisory lock named `key`, or return null at once when another session
 * holds it. The lock is released, and the connection given back, whatever `pass` does.
 */
export async function withSessionLock<T>(sql: postgres.Sql, key: string, pass: () => Promise<T>, timeoutMs?: number): Promise<T | null> {
  const reserved = await reserveConnection(sql, timeoutMs);
  try {
    const [row] = await reserved<{ locked: boolean }[]>`select pg_try_advisory_lock(hashtext(${key})) as locked`;
    if (!row?.locked) return null;
    try {
      return await pass();
    } finally {
      await reserved`select pg_advisory_unlock(hashtext(${key}))`;
    }
  } finally {
    reserved.release();
  }
}
