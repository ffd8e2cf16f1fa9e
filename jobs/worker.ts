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
import { deliverCallbackTask } from './tasks/deliver-callback.js';
import { sweepCallbacksTask } from './tasks/sweep-callbacks.js';

export function taskList(deps: Deps): TaskList {
  return {
    expire_payment: expirePaymentTask(deps),
    sweep_expiries: sweepExpiriesTask(deps),
    broadcast_refund: broadcastRefundTask(deps),
    sandbox_settle_tx: sandboxSettleTxTask(deps),
    broadcast_withdrawal: broadcastWithdrawalTask(deps),
    deliver_callback: deliverCallbackTask(deps),
    sweep_callbacks: sweepCallbacksTask(deps),
  };
}

export const CRONTAB = ['* * * * * sweep_expiries ?max=1', '* * * * * sweep_callbacks ?max=1'].join('\n');

export async function startWorker(deps: Deps, options: { concurrency?: number; pollInterval?: number; crontab?: boolean } = {}): Promise<Runner> {
  const concurrency = options.concurrency ?? 4;
  // The worker's pool is Kassa's, not graphile-worker's: graphile-worker removes its pool's error
  // listener when it stops, so a connection that PostgreSQL ends later (a restart, the embedded
  // server stopping at shutdown) would crash the process with an unhandled 'error' event.
  const pool = new pg.Pool({ connectionString: deps.database.url, max: concurrency + 2, application_name: 'kassa-worker' });
  const lost = (error: Error) => deps.log.warn({ err: error, component: 'worker' }, 'a worker database connection was closed');
  pool.on('error', lost); // idle clients
  pool.on('connect', (client) => client.on('error', lost)); // clients in use (their query fails on its own)
  const runner = await run({
    pgPool: pool,
    concurrency,
    pollInterval: options.pollInterval ?? 1000,
    noHandleSignals: true,
    logger: workerLogger(deps.log),
    taskList: taskList(deps),
    ...(options.crontab === false ? {} : { crontab: CRONTAB }),
  }).catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  // stop() waits for running jobs, then closes the pool it runs on.
  const stopRunner = runner.stop.bind(runner);
  runner.stop = async () => {
    try {
      await stopRunner();
    } finally {
      await pool.end();
    }
  };
  // Cron first fires at the next minute: schedule the expiries due before then now.
  if (options.crontab !== false) await runner.addJob('sweep_expiries', {}, { jobKey: 'sweep_expiries:start' });
  return runner;
}
