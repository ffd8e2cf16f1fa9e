/**
 * The worker's two kinds of concurrency: graphile-worker runs jobs in JOB_CONCURRENCY slots, and the
 * callback dispatcher keeps `concurrency` (12 by default). Each idle graphile-worker slot polls for
 * due jobs on its own timer, so the slot count is what an idle worker costs (jobs/worker.ts).
 */
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CRONTAB, DEFAULT_CONCURRENCY, JOB_CONCURRENCY, startWorker, WORKER_IDLE_CONNECTION_MS } from '../../jobs/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/worker.js';

let t: TestApp;
let runner: Runner | null = null;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await runner?.stop();
  await t?.close();
});

it('polls for jobs from JOB_CONCURRENCY slots, not the default concurrency (the callbacks\' 12), and still runs jobs', async () => {
  expect(JOB_CONCURRENCY).toBeLessThan(DEFAULT_CONCURRENCY);
  runner = await startWorker(t.deps, { pollInterval: 50, crontab: false });
  const pollers = new Set<string>();
  runner.events.on('worker:getJob:start', ({ worker }) => pollers.add(worker.workerId));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(pollers.size).toBe(JOB_CONCURRENCY);

  // A job added now is taken at once (graphile-worker's NOTIFY), by one of those slots.
  const started: string[] = [];
  runner.events.on('job:start', ({ job }) => started.push(job.task_identifier));
  await runner.addJob('sweep_expiries', {});
  await eventually(async () => started.includes('sweep_expiries'), 5_000, 'the sweep to start');
  expect(pollers.size).toBe(JOB_CONCURRENCY);
});

it('keeps its idle connections open across a cron minute, instead of opening new ones at each tick', async () => {
  // The crontab's shortest period is a minute ('* * * * *'): an idle connection must outlive it.
  expect(CRONTAB.split('\n').every((line) => line.startsWith('* * * * * '))).toBe(true);
  expect(WORKER_IDLE_CONNECTION_MS).toBeGreaterThan(60_000);
  const backends = async () =>
    new Set((await t.db.sql<{ pid: number }[]>`select pid from pg_stat_activity where application_name = 'kassa-worker' and datname = current_database()`).map((row) => row.pid));
  // A worker as the server runs it (a poll every 200 ms): its slots polling at once on start open
  // more connections than the one a poll then keeps busy.
  await runner?.stop();
  runner = await startWorker(t.deps, { crontab: false });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = await backends();
  expect(before.size).toBeGreaterThan(1);
  // node-postgres's default closes a connection idle for 10 s.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const after = await backends();
  expect([...before].filter((pid) => !after.has(pid))).toEqual([]);
}, 30_000);
