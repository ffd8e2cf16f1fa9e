/** Task `broadcast_withdrawal`: screen and send one PROCESSING withdrawal, record its outcome and callback. */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../../server/deps.js';
import { broadcastWithdrawal } from '../../server/modules/withdrawals/withdrawal-broadcast.job.js';

const Payload = z.object({ withdrawalId: z.uuid() });

export const broadcastWithdrawalTask = (deps: Deps): Task => async (payload) => {
  const { withdrawalId } = Payload.parse(payload);
  await broadcastWithdrawal(deps, deps.chains, withdrawalId);
};
