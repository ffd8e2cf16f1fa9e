/**
 * Task `deliver_callback`: one attempt of one callback. It schedules its own
 * next attempt (fixed interval, not graphile-worker's exponential backoff),
 * so the task itself only fails on infrastructure errors.
 */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { attemptDelivery } from '../../server/modules/callbacks/index.js';
import type { Deps } from '../../server/deps.js';

const Payload = z.object({ deliveryId: z.uuid() });

export const deliverCallbackTask = (deps: Deps): Task => async (payload, helpers) => {
  const { deliveryId } = Payload.parse(payload);
  const outcome = await attemptDelivery(deps, deliveryId);
  helpers.logger.debug(`deliver_callback ${deliveryId}: ${outcome}`);
};
