/**
 * The withdrawal callback as a subscriber of withdrawal outcomes: when the
 * business has a withdrawalCallbackUrl, a signed callback for the final
 * status, queued in the transaction of the outcome.
 */
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { businesses } from '../../../db/schema.js';
import type { RiskAssessment } from '../compliance/index.js';
import { TAG_NETWORKS, type Network } from '../money/index.js';
import { toWithdrawalRecord, type WithdrawalEnded, type WithdrawalRow } from '../withdrawals/index.js';
import { enqueueCallback } from './delivery.service.js';
import { withdrawalCallbackBody, type WithdrawalForCallback } from './withdrawal-callback-body.rules.js';

export async function withdrawalCallbackSubscriber(tx: Queryable, event: WithdrawalEnded): Promise<void> {
  const w = event.withdrawal;
  const [business] = await tx.select({ url: businesses.withdrawalCallbackUrl }).from(businesses).where(eq(businesses.id, w.businessId));
  if (!business?.url) return;
  const body = withdrawalCallbackBody(event.callbackStatus, callbackInput(w));
  await enqueueCallback(tx, { businessId: w.businessId, kind: 'WITHDRAWAL', subjectId: w.id, url: business.url, body }, event.at);
}

/** The callback's view of a withdrawal: the record's own fields (one formatting), the tag only where the network has tags. */
function callbackInput(w: WithdrawalRow): WithdrawalForCallback {
  const r = toWithdrawalRecord(w, 0) as Record<string, unknown>;
  const pick = <K extends keyof WithdrawalForCallback>(...keys: K[]) => Object.fromEntries(keys.map((k) => [k, r[k]])) as Pick<WithdrawalForCallback, K>;
  return {
    ...pick('withdrawalId', 'clientWithdrawalId', 'businessId', 'displayCurrency', 'withdrawCurrency', 'settlementCurrency'),
    ...pick('expectedDisplayAmount', 'estimatedWithdrawAmount', 'address', 'transactionId'),
    destinationTag: TAG_NETWORKS.includes(w.network as Network) ? w.destinationTag : null,
    txAddressOwner: (w.riskAssessment as unknown as RiskAssessment).addressOwner,
    actuals: (w.actuals ?? undefined) as WithdrawalForCallback['actuals'],
  };
}

