/**
 * Cron task `sweep_expiries` (every minute, and once when a worker starts):
 * gives each payment that expires within the next two minutes, or is
 * overdue, its exact-time `expire_payment` job (server/modules/payments/expiry.service.ts).
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../server/deps.js';
import { scheduleExpiries } from '../../server/modules/payments/index.js';

export const sweepExpiriesTask = (deps: Deps): Task => async (_payload, helpers) => {
  const added = await scheduleExpiries(deps);
  if (added) helpers.logger.debug(`sweep_expiries scheduled ${added} expiry job(s)`);
};
