/** Task `sweep_deposit` (signer role): move one confirmed deposit to the network's treasury; asks again later while a gas top-up or an earlier sweep is on its way. */
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../../server/deps.js';
import { sweepDeposit } from '../../server/modules/deposits/deposit-sweep.job.js';
import { sweepJobKey } from '../../server/modules/deposits/index.js';
import { NETWORKS } from '../../server/modules/money/index.js';

const Payload = z.object({ network: z.enum(NETWORKS), txHash: z.string(), outputIndex: z.number().int().nonnegative() });

/** How long to wait before looking again at a sweep that waits for a transaction to be mined. */
export const SWEEP_RECHECK_MS = 10_000;

export const sweepDepositTask = (deps: Deps): Task => async (payload, helpers) => {
  const ref = Payload.parse(payload);
  const outcome = await sweepDeposit(deps, deps.chains, ref);
  if (outcome === 'WAIT') {
    await helpers.addJob('sweep_deposit', ref, { runAt: new Date(Date.now() + SWEEP_RECHECK_MS), jobKey: sweepJobKey(ref) });
  }
};
