/**
 * Enqueue a job inside the caller's transaction with
 * `graphile_worker.add_job`, so the job exists exactly when the state it
 * follows from is committed (transactional outbox).
 */
import { is, SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';

/** Task names and payloads; each task re-validates its payload with zod. */
export type TaskPayloads = {
  expire_payment: { paymentId: string };
  broadcast_refund: { refundId: string };
  sandbox_settle_tx: { transactionId: string };
  broadcast_withdrawal: { withdrawalId: string };
  sweep_deposit: { network: string; txHash: string; outputIndex: number };
};

export type JobOptions = { runAt?: Date; jobKey?: string; maxAttempts?: number; queueName?: string };

/**
 * The `graphile_worker.add_job(…)` call as an SQL expression, for a
 * statement that enqueues as part of a larger write (in a CTE, per row of a
 * SELECT). `payload` may be SQL over that statement's rows.
 */
export function addJobSql<T extends keyof TaskPayloads>(
  task: T,
  payload: TaskPayloads[T] | SQL,
  options: { [K in keyof JobOptions]: JobOptions[K] | SQL } = {},
): SQL {
  const { runAt, jobKey, queueName, maxAttempts = 25 } = options;
  return sql`graphile_worker.add_job(
    ${task}::text,
    ${arg(is(payload, SQL) ? payload : JSON.stringify(payload), 'json')},
    queue_name => ${arg(queueName, 'text')},
    run_at => ${arg(runAt instanceof Date ? runAt.toISOString() : runAt, 'timestamptz')},
    job_key => ${arg(jobKey, 'text')},
    max_attempts => ${arg(maxAttempts, 'int')}
  )`;
}

/** A typed argument: SQL as it is, a value as a parameter, undefined as null. */
const arg = (value: unknown, type: string): SQL =>
  value === undefined ? sql.raw(`null::${type}`) : is(value, SQL) ? value : sql`${value}::${sql.raw(type)}`;

export async function enqueue<T extends keyof TaskPayloads>(tx: Queryable, task: T, payload: TaskPayloads[T], options: JobOptions = {}): Promise<void> {
  await tx.execute(sql`select ${addJobSql(task, payload, options)}`);
}
