/**
 * The worker's two kinds of concurrency: graphile-worker runs jobs in JOB_CONCURRENCY slots, and the
 * callback dispatcher keeps `concurrency` (12 by default). Each idle graphile-worker slot polls for
 * due jobs on its own timer, so the slot count is what an idle worker costs (jobs/worker.ts).
 */
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_CONCURRENCY, JOB_CONCURRENCY, startWorker } from '../../jobs/worker.js';
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
