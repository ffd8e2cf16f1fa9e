/**
 * A worker killed (or hung) while it held a payout job: that job is released
 * once it has been locked for PAYOUT_LOCK_LIMIT_MINUTES, and a live
 * graphile-worker runner then takes it (jobs/stale-payouts.ts). The crash
 * itself is simulated the only way a test can: locks written as a killed
 * process leaves them (locked_by its pool's id, shared by all its jobs;
 * locked_at in the past).
 */
import { sql } from 'drizzle-orm';
import { run, type Runner } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseStalePayoutJobs } from '../../jobs/stale-payouts.js';
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

async function lockOf(id: string): Promise<{ lockedBy: string | null; due: boolean } | undefined> {
  const [row] = (await db.db.execute(
    sql`select locked_by as "lockedBy", run_at >= now() - interval '5 seconds' and run_at <= now() as due from graphile_worker.jobs where id = ${id}::bigint`,
  )) as unknown as [{ lockedBy: string | null; due: boolean }?];
  return row;
}

describe('payout jobs of a worker that died or hung holding them', () => {
  it('releases a payout job locked over 10 minutes, and no other job of its process, nor a younger lock', async () => {
    // One process (graphile-worker locks every job of a process with its pool's id) holds four jobs.
    const stuckPayout = await lockedJob('broadcast_withdrawal', 'pool-a', 11);
    const stuckSweep = await lockedJob('sweep_deposit', 'pool-a', 25);
    const runningPayout = await lockedJob('broadcast_refund', 'pool-a', 2);
    const runningOther = await lockedJob('expire_payment', 'pool-a', 3);
    // A long-held non-payout job is left to graphile-worker and the expiry sweep.
    const slowOther = await lockedJob('expire_payment', 'pool-b', 30);

    const released = await releaseStalePayoutJobs(db.db);
    expect(released.sort((x, y) => x.task.localeCompare(y.task))).toEqual([
      { jobId: stuckPayout, task: 'broadcast_withdrawal', lockedBy: 'pool-a', lockedMinutes: 11 },
      { jobId: stuckSweep, task: 'sweep_deposit', lockedBy: 'pool-a', lockedMinutes: 25 },
    ]);
    // Released as graphile-worker's reset does: unlocked, due now (its run_at was an hour ago).
    expect(await lockOf(stuckPayout)).toEqual({ lockedBy: null, due: true });
    expect(await lockOf(stuckSweep)).toEqual({ lockedBy: null, due: true });
    expect((await lockOf(runningPayout))?.lockedBy).toBe('pool-a');
    expect((await lockOf(runningOther))?.lockedBy).toBe('pool-a');
    expect((await lockOf(slowOther))?.lockedBy).toBe('pool-b');

    // Nothing left to release: a second run changes nothing.
    expect(await releaseStalePayoutJobs(db.db)).toEqual([]);
    expect((await lockOf(runningPayout))?.lockedBy).toBe('pool-a');
    await db.db.execute(sql`delete from graphile_worker._private_jobs`);
  });

  it('a live runner takes the withdrawal broadcast only once it is released', async () => {
    const jobId = await lockedJob('broadcast_withdrawal', 'pool-killed', 12);
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
      expect((await lockOf(jobId))?.lockedBy).toBe('pool-killed');

      expect(await releaseStalePayoutJobs(db.db)).toEqual([{ jobId, task: 'broadcast_withdrawal', lockedBy: 'pool-killed', lockedMinutes: 12 }]);
      await eventually(async () => seen.length > 0, 10_000, 'the released job to run');
      expect(seen).toEqual([{ n: 'broadcast_withdrawalpool-killed' }]);
      // Completed by the live runner: the job is gone.
      await eventually(async () => (await lockOf(jobId)) === undefined, 10_000, 'the job to complete');
    } finally {
      await runner?.stop();
      await pool.end();
    }
  });

  it('runs every minute in the processes that run cron, which know the task', () => {
    expect(CRONTAB.split('\n')).toContain('* * * * * release_stale_payouts ?max=1');
    // Not a payout: the worker without keys runs it, and frees the signer's job when the signer dies.
    expect(Object.keys(taskList({} as never, 'without-payouts'))).toContain('release_stale_payouts');
    expect(Object.keys(taskList({} as never, 'payouts'))).not.toContain('release_stale_payouts');
  });
});
