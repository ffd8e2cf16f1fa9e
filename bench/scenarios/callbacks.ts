/**
 * Scenario 3. Callback delivery with the real worker (`startWorker`: Kassa's
 * tasks and its callback dispatcher, in this process; the receiver is its own
 * process):
 *  - drain: N withdrawal-style callbacks enqueued with `enqueueCallback`
 *    (batches inside transactions) to a receiver answering 200, then the
 *    worker started and timed until every delivery is DELIVERED; alongside
 *    graphile-worker's own rate for N no-op jobs at the same concurrency;
 *  - failing receiver (50% answer 500, KASSA_CALLBACK_RETRY_INTERVAL_S=1):
 *    payment callbacks (ordered per payment), first attempts planned at a
 *    steady rate (a quarter of the measured drain rate, so that with retries
 *    the worker runs at about half its capacity) over one load phase, while N
 *    more payment callbacks wait for an attempt an hour later; attempts per
 *    second and the schedule error (`started_at − planned_at` of
 *    callback_attempts).
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { run, type WorkerEvents } from 'graphile-worker';
import { silentLogger } from '../../db/migrate.js';
import { runnerSettings, startWorker } from '../../jobs/worker.js';
import { enqueueCallback } from '../../server/modules/callbacks/index.js';
import { withdrawalCallbackBody } from '../../server/modules/callbacks/index.js';
import { exampleWithdrawal } from '../../server/edges/rest/examples.js';
import { loadConfig } from '../../server/platform/config.js';
import { buildDeps } from '../../server/compose.js';
import { parseMasterKey } from '../../server/platform/secrets.js';
import type { BenchContext } from '../context.js';
import { postgresCpuMeter } from '../env.js';
import { makeRow, type Row } from '../report.js';
import { percentiles, sleep } from '../stats.js';

const S = '3 callbacks';
const fmtMs = (v: number | null | undefined) => (v === null || v === undefined ? '?' : String(Math.round(v)));
const BATCH = 500;

/** The documented withdrawal (/docs example), completed, as one of `i` callbacks of a business. */
function callbackBody(businessId: string, i: number): Record<string, unknown> {
  const w = exampleWithdrawal;
  return withdrawalCallbackBody('COMPLETED', {
    ...w,
    withdrawalId: randomUUID(),
    clientWithdrawalId: `payout-${i}`,
    businessId,
    txAddressOwner: w.addressOwner,
    actuals: {
      actualDisplayAmount: w.expectedDisplayAmount,
      actualWithdrawAmount: w.estimatedWithdrawAmount,
      deductedSettlementAmount: w.deductedSettlementAmount,
      withdrawFee: w.withdrawFee,
      displayFee: '0.92',
      displayRateDepegLossAmount: '0.00',
      settlementRateDepegLossAmount: '0.00',
    },
    transactionId: `0x${randomUUID().replace(/-/g, '')}`,
  });
}

export async function callbacksScenario(ctx: BenchContext): Promise<Row[]> {
  const { options, business } = ctx;
  const n = options.callbacks;
  const config = loadConfig({
    DATABASE_URL: ctx.db.url,
    KASSA_MASTER_KEY: ctx.masterKeyHex,
    KASSA_SANDBOX: 'true',
    KASSA_CALLBACK_RETRY_INTERVAL_S: '1',
    LOG_LEVEL: 'silent',
  });
  const deps = buildDeps(config, ctx.database, parseMasterKey(ctx.masterKeyHex));
  const { db, sql } = ctx.database;
  const receiver = await ctx.receiver();

  /**
   * Enqueue deliveries (batches of BATCH per transaction, pipelined inside); `at(i)` is each first
   * attempt. Each has a subject of its own; PAYMENT is the kind whose callbacks are ordered per subject.
   */
  const enqueueAll = async (count: number, path: string, at: (i: number) => Date, kind: 'WITHDRAWAL' | 'PAYMENT' = 'WITHDRAWAL') => {
    for (let start = 0; start < count; start += BATCH) {
      const size = Math.min(BATCH, count - start);
      await db.transaction((tx) =>
        Promise.all(
          Array.from({ length: size }, (_, k) =>
            enqueueCallback(
              tx,
              { businessId: business.businessId, kind, subjectId: randomUUID(), url: `${receiver.url}${path}`, body: callbackBody(business.businessId, start + k) },
              at(start + k),
            ),
          ),
        ),
      );
    }
  };

  // --- drain to a receiver answering 200 -------------------------------------------------
  options.log(`  callbacks: enqueueing ${n} callbacks`);
  const enqueueStarted = performance.now();
  const now = new Date();
  await enqueueAll(n, '/ok', () => now);
  const enqueueMsPer = (performance.now() - enqueueStarted) / n;

  options.log(`  callbacks: draining ${n} with the Kassa worker (concurrency ${options.workerConcurrency})`);
  const drainTimeout = Math.max(60_000, n * 60);
  const t0 = Date.now();
  const drainCpu = process.cpuUsage();
  const drainPgCpu = postgresCpuMeter(ctx.db.url);
  const worker = await startWorker(deps, { concurrency: options.workerConcurrency, crontab: false });
  const stopWorker = ctx.cleanup.add('Kassa worker (drain)', () => worker.stop());
  let pending = n;
  try {
    while (pending > 0 && Date.now() - t0 < drainTimeout) {
      await sleep(200);
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from callback_deliveries where url like '%/ok' and status = 'PENDING'`;
      pending = row!.n;
    }
  } finally {
    await stopWorker();
  }
  const drainCpuUsed = process.cpuUsage(drainCpu);
  const pgCpuPerDelivery = drainPgCpu(n - pending);
  const [last] = await sql<{ at: number | null; delivered: number }[]>`
    select (extract(epoch from max(delivered_at)) * 1000)::float8 as at, count(*)::int as delivered
    from callback_deliveries where url like '%/ok' and status = 'DELIVERED'`;
  const drainS = last?.at ? (last.at - t0) / 1000 : null;
  const delivered = last?.delivered ?? 0;
  const drainRate = drainS ? delivered / drainS : null;
  // The worker runs in this process: its CPU (less a little for the 200 ms progress query) per delivery.
  const cpuPerDelivery = delivered ? (drainCpuUsed.user + drainCpuUsed.system) / 1000 / delivered : null;
  const [http] = await sql<{ p50: number | null; p99: number | null }[]>`
    select percentile_cont(0.5) within group (order by a.latency_ms) as p50, percentile_cont(0.99) within group (order by a.latency_ms) as p99
    from callback_attempts a join callback_deliveries d on d.id = a.delivery_id where d.url like '%/ok'`;

  // --- graphile-worker no-op jobs, same concurrency -----------------------------------------
  /** `n` no-op jobs, run to the end. */
  const runNoop = async () => {
    const task = 'bench_noop';
    options.log(`  callbacks: ${n} no-op graphile-worker jobs (concurrency ${options.workerConcurrency})`);
    await sql`select graphile_worker.add_job(${task}, '{}'::json) from generate_series(1, ${n}::int)`;
    // ANALYZE graphile-worker's job table after the burst, as autovacuum does within its naptime (a
    // minute) in a running installation. Without it, whether the limit ran on statistics from before
    // its 10,000 rows depended on autovacuum's timing: its job fetch then sorted the whole job table
    // (730–776 jobs/s against 3,100–3,300/s, 2.15 ms of PostgreSQL CPU a job). Kassa's phases get no
    // such help: its dispatcher analyzes callback_deliveries itself at start and after a burst
    // (delivery.service.ts `refreshStaleStatistics`).
    await sql`analyze graphile_worker._private_jobs`;
    const events: WorkerEvents = new EventEmitter() as WorkerEvents;
    let done = 0;
    let end = 0;
    const allDone = new Promise<void>((resolve) => {
      events.on('job:success', ({ job }) => {
        if (job.task_identifier !== task) return;
        if (++done === n) {
          end = Date.now();
          resolve();
        }
      });
    });
    const started = Date.now();
    const cpu = process.cpuUsage();
    const pgCpu = postgresCpuMeter(ctx.db.url);
    // The same runner settings as Kassa's worker (concurrency, poll interval): the limit is
    // never lowered by giving graphile-worker worse settings than Kassa runs with.
    const runner = await run({
      connectionString: ctx.db.url,
      ...runnerSettings(options.workerConcurrency),
      noHandleSignals: true,
      logger: silentLogger,
      events,
      taskList: { [task]: async () => {} },
    });
    const stop = ctx.cleanup.add(`no-op runner (${task})`, () => runner.stop());
    try {
      await Promise.race([allDone, sleep(drainTimeout)]);
    } finally {
      await stop();
    }
    const used = process.cpuUsage(cpu);
    const pgCpuPerJob = pgCpu(done);
    const seconds = end ? (end - started) / 1000 : null;
    return { seconds, rate: seconds ? n / seconds : null, cpuPerJob: done ? (used.user + used.system) / 1000 / done : null, pgCpuPerJob };
  };
  const noop = await runNoop();
  const noopS = noop.seconds;
  const noopRate = noop.rate;
  const cpuPerNoop = noop.cpuPerJob;

  // --- receiver failing 50%, retries every second ----------------------------------------------
  const offered = Math.max(1, (drainRate ?? 100) / 4);
  const flakyCount = Math.max(4, Math.min(n, Math.round(offered * options.durationS)));
  const step = (options.durationS * 1000) / flakyCount;
  options.log(`  callbacks: ${flakyCount} callbacks to a receiver failing 50%, first attempts at ${Math.round(1000 / step)}/s over ${options.durationS} s`);
  // A backlog of n deliveries waiting for their first attempt (an hour from now) while the measured
  // ones run: due jobs must still start on time with that many queued for later.
  options.log(`  callbacks: ${n} deliveries waiting for a later first attempt (the backlog)`);
  const later = new Date(Date.now() + 3_600_000);
  await enqueueAll(n, '/later', () => later, 'PAYMENT');
  // The worker first, then the schedule: the first attempt is planned once enqueueing is surely done.
  const flakyWorker = await startWorker(deps, { concurrency: options.workerConcurrency, crontab: false });
  const stopFlakyWorker = ctx.cleanup.add('Kassa worker (failing receiver)', () => flakyWorker.stop());
  const base = Date.now() + 300 + flakyCount * enqueueMsPer * 2;
  await enqueueAll(flakyCount, '/flaky', (i) => new Date(base + i * step), 'PAYMENT');
  // Retries of the last deliveries: with 50% failures, a few need several more 1 s slots.
  const tailS = Math.max(1, Math.min(10, options.durationS));
  const flakyEnd = base + options.durationS * 1000 + tailS * 1000;
  let stillPending = flakyCount;
  try {
    while (Date.now() < flakyEnd) {
      await sleep(250);
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from callback_deliveries where url like '%/flaky' and status = 'PENDING'`;
      stillPending = row!.n;
      if (stillPending === 0) break;
    }
  } finally {
    await stopFlakyWorker();
  }
  const attempts = await sql<{ started: number; error_ms: number; status_code: number | null }[]>`
    select (extract(epoch from a.started_at) * 1000)::float8 as started,
      (extract(epoch from (a.started_at - a.planned_at)) * 1000)::float8 as error_ms, a.status_code
    from callback_attempts a join callback_deliveries d on d.id = a.delivery_id
    where d.url like '%/flaky' order by a.started_at`;
  const errors = attempts.map((a) => Number(a.error_ms));
  const span = attempts.length > 1 ? (attempts.at(-1)!.started - attempts[0]!.started) / 1000 : null;
  const attemptRate = span ? attempts.length / span : null;
  const failed = attempts.filter((a) => a.status_code !== 200).length;
  const schedule = percentiles(errors);
  await receiver.stop();

  return [
    makeRow({ scenario: S, name: 'callback drain vs graphile-worker no-op jobs', metric: `callbacks/s, worker concurrency ${options.workerConcurrency}`, unit: '/s', kassa: drainRate, limit: noopRate, digits: 0,
      target: { of: 'ratio', op: '>=', value: 0.5 },
      note: `${delivered}/${n} delivered${pending > 0 ? ` (${pending} still pending at the ${drainTimeout / 1000} s timeout)` : ''}; limit: ${n} no-op jobs on graphile-worker 0.17 at the same concurrency` }),
    makeRow({ scenario: S, name: 'callback CPU per delivery vs per no-op job', metric: 'worker process CPU (user+sys) / job', unit: 'ms', kassa: cpuPerDelivery, limit: cpuPerNoop, digits: 3,
      note: `the local receiver answered in ${fmtMs(http?.p50)} ms (p50), ${fmtMs(http?.p99)} ms (p99) as seen by the worker (callback_attempts.latency_ms); the rest of each delivery is database work` }),
    makeRow({ scenario: S, name: 'callback PostgreSQL CPU per delivery vs per no-op job', metric: 'database server CPU (user+sys, all backends) / job', unit: 'ms', kassa: pgCpuPerDelivery, limit: noop.pgCpuPerJob, digits: 3 }),
    makeRow({ scenario: S, name: `callback drain time (${n})`, metric: 'time until every delivery is DELIVERED', unit: 's', kassa: drainS, limit: noopS, digits: 2 }),
    makeRow({ scenario: S, name: 'callbacks to a 50%-failing receiver', metric: 'attempts/s', unit: '/s', kassa: attemptRate, digits: 1,
      note: `${attempts.length} attempts (${failed} failed) for ${flakyCount} deliveries, first attempts offered at ${offered.toFixed(1)}/s; ${stillPending} still retrying at the end` }),
    makeRow({ scenario: S, name: 'callback schedule error p50', metric: 'started_at − planned_at', unit: 'ms', kassa: schedule.p50, digits: 0 }),
    makeRow({ scenario: S, name: `callback schedule error p99, ${n} waiting`, metric: 'started_at − planned_at', unit: 'ms', kassa: schedule.p99, digits: 0, target: { of: 'kassa', op: '<=', value: 2000 },
      note: `payment callbacks; ${n} more payment callbacks (one payment each) were waiting for a first attempt an hour later throughout; planned_at is the slot each attempt was scheduled for (next_attempt_at)` }),
  ];
}
