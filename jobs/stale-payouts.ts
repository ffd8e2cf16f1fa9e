/**
 * Payout jobs held by a worker that died (or hung) while running them.
 *
 * graphile-worker keeps a job locked by the process that took it until that
 * process completes or fails it. A process killed mid-job (SIGKILL, OOM, the
 * machine lost) never does, and graphile-worker frees such a lock only once
 * it is four hours old (its stale-lock reset, every 8–10 minutes). A
 * withdrawal or refund whose `broadcast_*` job was running then stayed
 * unsent for over four hours.
 *
 * A payout job runs for seconds: one screening, one signature, one broadcast,
 * each with its own timeout. One still locked after PAYOUT_LOCK_LIMIT was
 * taken by a process that is gone or stuck on it, so that job is released as
 * graphile-worker's own reset does (lock cleared, `run_at` not in the past)
 * and runs again on a live worker. Only the payout job: `locked_by` names the
 * whole process (its worker pool, shared by every concurrency slot), which
 * may be alive and running other jobs. One UPDATE picks and releases the
 * jobs, so a job completed in between is simply not there to release.
 *
 * Running a payout again, even beside a stuck first run that wakes up, is
 * safe: a broadcast is claimed per withdrawal or refund id (the signed
 * transaction is stored once and sent again), a sweep per deposit. Kassa
 * puts payout jobs in no named queue, so there is no queue lock to free.
 */
import { sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';
import { PAYOUT_TASKS } from './payout-tasks.js';

/** Longer than any payout job runs (its node calls time out well before), far under four hours. */
export const PAYOUT_LOCK_LIMIT_MINUTES = 10;

export type ReleasedJob = { jobId: string; task: string; lockedBy: string; lockedMinutes: number };

/** Release every payout job locked longer than PAYOUT_LOCK_LIMIT_MINUTES; returns them, as they were held. */
export async function releaseStalePayoutJobs(db: Queryable): Promise<ReleasedJob[]> {
  const tasks = sql.join(
    PAYOUT_TASKS.map((task) => sql`${task}`),
    sql`, `,
  );
  return (await db.execute(sql`
    with stale as (
      select j.id, j.locked_by, j.locked_at, t.identifier
      from graphile_worker._private_jobs j
      join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier in (${tasks}) and j.locked_at < now() - make_interval(mins => ${PAYOUT_LOCK_LIMIT_MINUTES})
      for update of j
    )
    update graphile_worker._private_jobs j
    set locked_at = null, locked_by = null, run_at = greatest(j.run_at, now())
    from stale where j.id = stale.id
    returning j.id::text as "jobId", stale.identifier as task, stale.locked_by as "lockedBy",
              floor(extract(epoch from now() - stale.locked_at) / 60)::int as "lockedMinutes"`)) as unknown as ReleasedJob[];
}
