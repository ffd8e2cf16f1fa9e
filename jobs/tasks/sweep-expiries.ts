/**
 * Cron task `sweep_expiries` (every minute): expire any open payment whose
 * job was lost or is stuck behind a crashed worker's lock. The per-payment
 * job stays the primary mechanism; this only catches stragglers.
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../server/deps.js';
import { expirePayment, overduePaymentIds } from '../../server/payments/expiry.js';

export const sweepExpiriesTask = (deps: Deps): Task => async (_payload, helpers) => {
  const ids = await overduePaymentIds(deps);
  for (const id of ids) await expirePayment(deps, id);
  if (ids.length) helpers.logger.info(`sweep_expiries expired ${ids.length} payment(s)`);
};
