/** Task `sandbox_settle_tx`: the sandbox chain confirms (or drops) one simulated transaction. */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../../server/deps.js';

const Payload = z.object({ transactionId: z.uuid() });

export const sandboxSettleTxTask = (deps: Deps): Task => async (payload) => {
  const { transactionId } = Payload.parse(payload);
  // Only the sandbox makes these jobs; without its faucet there is nothing to settle.
  await deps.faucet?.settle(deps, transactionId);
};
