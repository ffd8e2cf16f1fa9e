/** Task `expire_payment`: expire one ONE_TIME payment at its expiry time. */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../../server/deps.js';
import { expirePayment } from '../../server/modules/payments/index.js';

const Payload = z.object({ paymentId: z.uuid() });

export const expirePaymentTask = (deps: Deps): Task => async (payload, helpers) => {
  // A queued job may predate the current code: validate before trusting it.
  const { paymentId } = Payload.parse(payload);
  const outcome = await expirePayment(deps, paymentId);
  helpers.logger.debug(`expire_payment ${paymentId}: ${outcome}`);
};
