/**
 * A caller authenticated from the process's cache of API keys, not yet
 * confirmed against the database. The hot operations (create and read a
 * payment) confirm it inside their own statement instead of reading the key
 * row first: one round trip instead of two (bench scenarios 1–2).
 *
 * The proof names the row versions (PostgreSQL's `xmin`: every UPDATE writes
 * a new one) of the key and its business that the cache holds. The statement
 * acts only if both rows are still those versions and the key is not
 * revoked, in its own snapshot — so a revoked key, a changed scope or a
 * changed fee is refused from the moment its change commits, exactly as when
 * the key row was read first. A statement that finds the proof stale does
 * nothing and throws `StaleCallerError`; the route reads the key afresh and
 * runs the operation again.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';

export type CallerProof = { apiKeyId: string; keyVersion: string; businessVersion: string };

/** The cached rows a proof stands for were changed (or the key revoked) since they were cached. */
export class StaleCallerError extends Error {
  constructor() {
    super('the cached API key or business changed; authenticate again');
  }
}

/**
 * SQL true while the proof holds: the key unrevoked and both rows at the cached versions.
 *
 * A scalar subquery (at most one row: both ids are primary keys), not `EXISTS`: in a batch's
 * statement, where each row of a JSON parameter carries its own proof, PostgreSQL may turn an
 * `EXISTS` into a hashed subplan, built by reading every API key and every business at each
 * execution, because it plans for the 100 rows it assumes a set-returning function gives rather
 * than the ~5 a batch has. It did so up to somewhere between 2,000 and 20,000 businesses
 * (`EXPLAIN (GENERIC_PLAN)`): with 5,000 businesses the create ran at 1,100–1,260 a second against
 * 2,300–2,850 with one, PostgreSQL's CPU a create 0.55–0.70 ms against 0.14–0.20. A scalar
 * subquery is never hashed: each row looks its key and business up, by primary key once the
 * tables hold more than a handful of rows (with 5,000 businesses 2,740–3,340 creates a second,
 * 0.13–0.19 ms).
 */
export function proofHolds(proof: { apiKeyId: SQL | string; keyVersion: SQL | string; businessVersion: SQL | string }): SQL {
  return sql`(select true from api_keys k join businesses b on b.id = k.business_id
    where k.id = ${proof.apiKeyId}::uuid and k.revoked_at is null
      and k.xmin = ${proof.keyVersion}::xid and b.xmin = ${proof.businessVersion}::xid) is not null`;
}

/**
 * After a statement guarded by `proofHolds` acted on nothing: throws
 * `StaleCallerError` when the proof no longer holds, so the nothing is not
 * mistaken for "not found" or "already exists".
 */
export async function assertProofHolds(db: Queryable, proof: CallerProof | undefined): Promise<void> {
  if (!proof) return;
  const [row] = (await db.execute(sql`select ${proofHolds(proof)} as holds`)) as unknown as [{ holds: boolean }];
  if (!row?.holds) throw new StaleCallerError();
}
