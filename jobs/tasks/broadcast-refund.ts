/** Task `broadcast_refund`: send one PENDING refund through the chain adapter. */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../../server/deps.js';
import { broadcastRefund } from '../../server/modules/deposits/refund-broadcast.job.js';

const Payload = z.object({ refundId: z.uuid() });

export const broadcastRefundTask = (deps: Deps): Task => async (payload) => {
  const { refundId } = Payload.parse(payload);
  await broadcastRefund(deps, deps.chains, refundId);
};
