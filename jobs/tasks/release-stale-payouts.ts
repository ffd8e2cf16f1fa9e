/**
 * Cron task `release_stale_payouts` (every minute): frees a payout job whose
 * worker died or hung holding it, so the withdrawal, refund or sweep is sent
 * by a live worker within minutes, not graphile-worker's four hours
 * (jobs/stale-payouts.ts).
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../server/deps.js';
import { PAYOUT_LOCK_LIMIT_MINUTES, releaseStalePayoutJobs } from '../stale-payouts.js';

export const releaseStalePayoutsTask = (deps: Deps): Task => async () => {
  for (const job of await releaseStalePayoutJobs(deps.database.db)) {
    deps.log.warn(
      { component: 'worker', ...job },
      `released payout job ${job.jobId} (${job.task}) held by ${job.lockedBy} for ${job.lockedMinutes} minutes, over the ` +
        `${PAYOUT_LOCK_LIMIT_MINUTES}-minute limit: its worker died or hung; a live worker sends it again (the same stored transaction)`,
    );
  }
};
