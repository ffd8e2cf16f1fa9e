/**
 * A worker killed while it held a payout job: its jobs are released once that
 * payout job has been locked for PAYOUT_LOCK_LIMIT, and a live graphile-worker
 * runner then takes them (jobs/dead-workers.ts). The crash itself is
 * simulated the only way a test can: locks written as a killed worker leaves
 * them (locked_by set, locked_at in the past).
 */
import { sql } from 'drizzle-orm';
import { run, type Runner } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseDeadPayoutWorkers } from '../../jobs/dead-workers.js';
import { CRONTAB, taskList } from '../../jobs/worker.js';
import { eventually } from '../helpers/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Add a job and lock it as `workerId` did `minutesAgo` minutes ago; returns its id. */
async function lockedJob(task: string, workerId: string, minutesAgo: number): Promise<string> {
  const [job] = (await db.db.execute(sql`
    select id::text from graphile_worker.add_job(${task}, json_build_object('n', ${task + workerId}::text), run_at := now() - interval '1 hour')`)) as unknown as [{ id: string }];
  await db.db.execute(sql`
    update graphile_worker._private_jobs
    set locked_by = ${workerId}, locked_at = now() - make_interval(mins => ${minutesAgo}), attempts = 1
    where id = ${job.id}::bigint`);
  return job.id;
}

async function lockOf(id: string): Promise<{ lockedBy: string | null } | undefined> {
  const [row] = (await db.db.execute(sql`select locked_by as "lockedBy" from graphile_worker.jobs where id = ${id}::bigint`)) as unknown as [{ lockedBy: string | null }?];
  return row;
}

describe('jobs of a worker that died holding a payout', () => {
  it('releases every job of a worker whose payout job is locked over 10 minutes, and nothing of live workers', async () => {
    const deadPayout = await lockedJob('broadcast_withdrawal', 'worker-dead', 11);
    const deadOther = await lockedJob('expire_payment', 'worker-dead', 3);
    const busyPayout = await lockedJob('broadcast_refund', 'worker-busy', 2);
    // A long-held non-payout job says nothing about its worker (graphile-worker and the expiry sweep handle those).
    const slowOther = await lockedJob('expire_payment', 'worker-slow', 30);

    expect(await releaseDeadPayoutWorkers(db.db)).toEqual([{ workerId: 'worker-dead', jobs: 2, payoutJobs: 1 }]);
    expect(await lockOf(deadPayout)).toEqual({ lockedBy: null });
    expect(await lockOf(deadOther)).toEqual({ lockedBy: null });
    expect(await lockOf(busyPayout)).toEqual({ lockedBy: 'worker-busy' });
    expect(await lockOf(slowOther)).toEqual({ lockedBy: 'worker-slow' });

    // Nothing left to release: a second run changes nothing.
    expect(await releaseDeadPayoutWorkers(db.db)).toEqual([]);
    expect(await lockOf(busyPayout)).toEqual({ lockedBy: 'worker-busy' });
    await db.db.execute(sql`delete from graphile_worker._private_jobs`);
  });

  it('a live runner takes the withdrawal broadcast only once the dead worker is released', async () => {
    const jobId = await lockedJob('broadcast_withdrawal', 'worker-killed', 12);
    const seen: unknown[] = [];
    const pool = new pg.Pool({ connectionString: db.url, max: 4 });
    let runner: Runner | undefined;
    try {
      runner = await run({
        pgPool: pool,
        concurrency: 1,
        pollInterval: 50,
        noHandleSignals: true,
        taskList: { broadcast_withdrawal: async (payload) => void seen.push(payload) },
      });
      // Polled for a second while the lock stands: graphile-worker leaves it to its four-hour reset.
      await new Promise((r) => setTimeout(r, 1000));
      expect(seen).toEqual([]);
      expect(await lockOf(jobId)).toEqual({ lockedBy: 'worker-killed' });

      expect(await releaseDeadPayoutWorkers(db.db)).toEqual([{ workerId: 'worker-killed', jobs: 1, payoutJobs: 1 }]);
      await eventually(async () => seen.length > 0, 10_000, 'the released job to run');
      expect(seen).toEqual([{ n: 'broadcast_withdrawalworker-killed' }]);
      // Completed by the live runner: the job is gone.
      await eventually(async () => (await lockOf(jobId)) === undefined, 10_000, 'the job to complete');
    } finally {
      await runner?.stop();
      await pool.end();
    }
  });

  it('runs every minute in the processes that run cron, which know the task', () => {
    expect(CRONTAB.split('\n')).toContain('* * * * * release_dead_workers ?max=1');
    // Not a payout: the worker without keys runs it, and frees the signer's jobs when the signer dies.
    expect(Object.keys(taskList({} as never, 'without-payouts'))).toContain('release_dead_workers');
    expect(Object.keys(taskList({} as never, 'payouts'))).not.toContain('release_dead_workers');
  });
});
