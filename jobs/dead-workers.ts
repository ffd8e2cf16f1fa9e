/**
 * Jobs held by a worker that died while sending a payout.
 *
 * graphile-worker keeps a job locked by the worker that took it until that
 * worker completes or fails it. A worker killed mid-job (SIGKILL, OOM, the
 * machine lost) never does, and graphile-worker frees such a lock only once it
 * is four hours old (its stale-lock reset, every 8–10 minutes). A withdrawal or
 * refund whose `broadcast_*` job was running then stayed unsent for over four
 * hours.
 *
 * A payout job runs for seconds: one screening, one signature, one broadcast,
 * each with its own timeout. One still locked after PAYOUT_LOCK_LIMIT means
 * its worker is gone (or hung), so every job that worker holds is released
 * (graphile-worker's own `force_unlock_workers`) and runs again on a live
 * worker. Running one again is safe: a broadcast is idempotent per withdrawal
 * or refund id (the signed transaction is stored once and sent again), a sweep
 * per deposit, and the other tasks only recompute (`expire_payment`,
 * `sweep_expiries`). A worker that died holding no payout job is left to
 * graphile-worker: its `expire_payment` jobs are replaced by the expiry
 * sweep after five minutes, and nothing else waits on its jobs.
 */
import { sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';
import { PAYOUT_TASKS } from './payout-tasks.js';

/** Minutes longer than any payout job runs (its node calls time out well before), far under four hours. */
export const PAYOUT_LOCK_LIMIT = '10 minutes';

/** Values as SQL parameters separated by commas (drizzle would send an array as a single record). */
const list = (values: readonly string[]) =>
  sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  );

export type ReleasedWorker = { workerId: string; jobs: number; payoutJobs: number };

/**
 * Release every job of each worker holding a payout job locked longer than PAYOUT_LOCK_LIMIT;
 * returns those workers with what they held.
 */
export async function releaseDeadPayoutWorkers(db: Queryable): Promise<ReleasedWorker[]> {
  const tasks = list(PAYOUT_TASKS);
  const held = (await db.execute(sql`
    select j.locked_by as "workerId", count(*)::int as jobs, count(*) filter (where j.task_identifier in (${tasks}))::int as "payoutJobs"
    from graphile_worker.jobs j
    where j.locked_by in (
      select locked_by from graphile_worker.jobs
      where task_identifier in (${tasks}) and locked_at < now() - interval '${sql.raw(PAYOUT_LOCK_LIMIT)}')
    group by j.locked_by order by j.locked_by`)) as unknown as ReleasedWorker[];
  // Only the workers found above: a job they completed in between is simply not there to release.
  if (held.length) {
    await db.execute(sql`select graphile_worker.force_unlock_workers(array[${list(held.map((w) => w.workerId))}]::text[])`);
  }
  return held;
}
