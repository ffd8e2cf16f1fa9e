/** Cron task `sweep_callbacks` (every minute): re-add overdue deliveries whose job died with its worker. */
import type { Task } from 'graphile-worker';
import { sweepCallbacks } from '../../server/modules/callbacks/index.js';
import type { Deps } from '../../server/deps.js';

export const sweepCallbacksTask = (deps: Deps): Task => async (_payload, helpers) => {
  const n = await sweepCallbacks(deps);
  if (n) helpers.logger.info(`sweep_callbacks re-added ${n} delivery job(s)`);
};
