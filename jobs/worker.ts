/**
 * The job worker: graphile-worker over the same PostgreSQL. Tasks are thin
 * and call into server/*; the task list is built here with the injected
 * dependencies.
 */
import { run, type Runner, type TaskList } from 'graphile-worker';
import pg from 'pg';
import type { Deps } from '../server/deps.js';
import { workerLogger } from '../server/platform/logger.js';
import { expirePaymentTask } from './tasks/expire-payment.js';
import { sweepExpiriesTask } from './tasks/sweep-expiries.js';
import { broadcastRefundTask } from './tasks/broadcast-refund.js';
import { sandboxSettleTxTask } from './tasks/sandbox-settle-tx.js';
import { broadcastWithdrawalTask } from './tasks/broadcast-withdrawal.js';
import { sweepDepositTask } from './tasks/sweep-deposit.js';
import { releaseStalePayoutsTask } from './tasks/release-stale-payouts.js';
import { startCallbackDispatcher } from '../server/modules/callbacks/index.js';
import { PAYOUT_TASKS } from './payout-tasks.js';

export { PAYOUT_TASKS } from './payout-tasks.js';

/**
 * Which tasks this process takes: every one (sandbox, or a live process that
 * also signs), all but the payouts (a live worker without keys: payouts wait
 * in the queue for the signer), or only the payouts (the signer role).
 * graphile-worker only picks up jobs whose task this process knows.
 */
export type TaskSelection = 'all' | 'without-payouts' | 'payouts';

export function taskList(deps: Deps, selection: TaskSelection = 'all'): TaskList {
  const all: TaskList = {
    expire_payment: expirePaymentTask(deps),
    sweep_expiries: sweepExpiriesTask(deps),
    release_stale_payouts: releaseStalePayoutsTask(deps),
    broadcast_refund: broadcastRefundTask(deps),
    sandbox_settle_tx: sandboxSettleTxTask(deps),
    broadcast_withdrawal: broadcastWithdrawalTask(deps),
    sweep_deposit: sweepDepositTask(deps),
  };
  if (selection === 'all') return all;
  const payout = (name: string) => (PAYOUT_TASKS as readonly string[]).includes(name);
  return Object.fromEntries(Object.entries(all).filter(([name]) => payout(name) === (selection === 'payouts')));
}

export const CRONTAB = ['* * * * * sweep_expiries ?max=1', '* * * * * release_stale_payouts ?max=1'].join('\n');

/**
 * How the runner fetches jobs:
 * - pollInterval: a job added for later (a payment's expiry, a deposit's sweep) gets no wake-up
 *   when it falls due — graphile-worker's NOTIFY fires when the job is added — so it waits for the
 *   next poll; 200 ms. (Callbacks are not jobs: the dispatcher sleeps until the next one is due.)
 * - No local queue: graphile-worker's batch-fetching `localQueue` (and batched completion) was
 *   measured this round and left off. A worker killed with a batch in hand leaves every job of the
 *   batch locked for graphile-worker's four hours — a withdrawal's broadcast or a payment's expiry
 *   among them — where without it only the jobs actually running are; the crash test failed once
 *   with it.
 */
export function runnerSettings(concurrency: number, pollInterval = 200) {
  return { concurrency, pollInterval };
}

/**
 * Callbacks POSTed at once by the dispatcher. A callback mostly waits (the receiver, its own
 * commit): with 4, the database and CPU were left idle; 12 (bench scenario 3).
 */
export const DEFAULT_CONCURRENCY = 12;

/**
 * graphile-worker jobs run at once (at most `concurrency`). Each idle slot of graphile-worker polls
 * for due jobs on its own timer, so 12 slots ran its getJobs query 60 times a second in an idle
 * process: idle CPU, 20 s of an idle `npm start`, was Kassa 56 and PostgreSQL 34 ms a second
 * with 12 slots, 34 and 12 with 4. The jobs are few (expiries, sweeps, payouts); the many,
 * callbacks, are the dispatcher's and keep `concurrency`.
 */
export const JOB_CONCURRENCY = 4;

/**
 * How long an idle connection of the worker's pool stays open: longer than the crontab's minute.
 * With node-postgres's default (10 s), the connection a 200 ms poll keeps busy survived and the
 * others were closed between two ticks, so each minute's jobs opened new ones: a backend forked, a
 * SCRAM exchange (PBKDF2 on both sides, seen in a CPU profile at the minute's turn under load), its
 * caches cold. An idle `npm start` for 3 minutes: 11 worker backends started against 6, PostgreSQL
 * CPU 2.01 against 1.75 s.
 */
export const WORKER_IDLE_CONNECTION_MS = 5 * 60_000;

export async function startWorker(
  deps: Deps,
  options: { concurrency?: number; pollInterval?: number; crontab?: boolean; tasks?: TaskSelection } = {},
): Promise<Runner> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const jobConcurrency = Math.min(concurrency, JOB_CONCURRENCY);
  // The worker's pool is Kassa's, not graphile-worker's: graphile-worker removes its pool's error
  // listener when it stops, so a connection that PostgreSQL ends later (a restart, the embedded
  // server stopping at shutdown) would crash the process with an unhandled 'error' event.
  const pool = new pg.Pool({ connectionString: deps.database.url, max: jobConcurrency + 2, application_name: 'kassa-worker', idleTimeoutMillis: WORKER_IDLE_CONNECTION_MS });
  const lost = (error: Error) => deps.log.warn({ err: error, component: 'worker' }, 'a worker database connection was closed');
  pool.on('error', lost); // idle clients
  pool.on('connect', (client) => client.on('error', lost)); // clients in use (their query fails on its own)
  const runner = await run({
    pgPool: pool,
    ...runnerSettings(jobConcurrency, options.pollInterval),
    noHandleSignals: true,
    logger: workerLogger(deps.log),
    taskList: taskList(deps, options.tasks),
    // No crontab: an empty list, or graphile-worker reads ./crontab from the working directory (and logs that it is missing).
    ...(options.crontab === false ? { parsedCronItems: [] } : { crontab: CRONTAB }),
  }).catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  // Callbacks go with the tasks of a process without keys (the signer role only signs payouts).
  const dispatcher = options.tasks === 'payouts' ? null : await startCallbackDispatcher(deps, { concurrency }).catch(async (error: unknown) => {
    await runner.stop();
    await pool.end();
    throw error;
  });
  // stop() waits for running jobs and callbacks, then closes the pool it runs on.
  const stopRunner = runner.stop.bind(runner);
  runner.stop = async () => {
    try {
      await Promise.all([stopRunner(), dispatcher?.stop()]);
    } finally {
      await pool.end();
    }
  };
  // Cron first fires at the next minute: schedule the expiries due before then now.
  if (options.crontab !== false) await runner.addJob('sweep_expiries', {}, { jobKey: 'sweep_expiries:start' });
  return runner;
}
