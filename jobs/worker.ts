/**
 * The job worker: graphile-worker over the same PostgreSQL. Tasks are thin
 * and call into server/*; the task list is built here with the injected
 * dependencies.
 */
import { run, type Runner, type TaskList } from 'graphile-worker';
import type { Deps } from '../server/deps.js';
import { silentLogger } from '../db/migrate.js';
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
  const runner = await run({
    connectionString: deps.database.url,
    concurrency: options.concurrency ?? 4,
    pollInterval: options.pollInterval ?? 1000,
    noHandleSignals: true,
    logger: silentLogger,
    taskList: taskList(deps),
    ...(options.crontab === false ? {} : { crontab: CRONTAB }),
  });
  // Cron first fires at the next minute: schedule the expiries due before then now.
  if (options.crontab !== false) await runner.addJob('sweep_expiries', {}, { jobKey: 'sweep_expiries:start' });
  return runner;
}
