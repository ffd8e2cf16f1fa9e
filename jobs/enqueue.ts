/**
 * Enqueue a job inside the caller's transaction with
 * `graphile_worker.add_job`, so the job exists exactly when the state it
 * follows from is committed (transactional outbox).
 */
import { sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';

/** Task names and payloads; each task re-validates its payload with zod. */
export type TaskPayloads = {
  expire_payment: { paymentId: string };
  broadcast_refund: { refundId: string };
  sandbox_settle_tx: { transactionId: string };
  deliver_callback: { deliveryId: string };
  broadcast_withdrawal: { withdrawalId: string };
};

export async function enqueue<T extends keyof TaskPayloads>(
  tx: Queryable,
  task: T,
  payload: TaskPayloads[T],
  options: { runAt?: Date; jobKey?: string; maxAttempts?: number; queueName?: string } = {},
): Promise<void> {
  await tx.execute(sql`select graphile_worker.add_job(
    ${task}::text,
    ${JSON.stringify(payload)}::json,
    queue_name => ${options.queueName ?? null}::text,
    run_at => ${options.runAt?.toISOString() ?? null}::timestamptz,
    job_key => ${options.jobKey ?? null}::text,
    max_attempts => ${options.maxAttempts ?? 25}::int
  )`);
}
