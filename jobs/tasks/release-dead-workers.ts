/**
 * Cron task `release_dead_workers` (every minute): frees the jobs of a worker
 * that died holding a payout job, so the withdrawal or refund is sent by a
 * live worker within minutes, not graphile-worker's four hours (jobs/dead-workers.ts).
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../server/deps.js';
import { PAYOUT_LOCK_LIMIT, releaseDeadPayoutWorkers } from '../dead-workers.js';

export const releaseDeadWorkersTask = (deps: Deps): Task => async () => {
  for (const worker of await releaseDeadPayoutWorkers(deps.database.db)) {
    deps.log.warn(
      { component: 'worker', workerId: worker.workerId, jobs: worker.jobs, payoutJobs: worker.payoutJobs },
      `released the jobs of worker ${worker.workerId}: it held a payout job for over ${PAYOUT_LOCK_LIMIT}, so it is taken to have died`,
    );
  }
};
