/**
 * Live payouts end when the chain says so, not at their broadcast: a withdrawal stays PROCESSING,
 * and a refund PENDING, with its transaction's hash, until that transaction's block is as deep as
 * the network's confirmations (CONTRACT §10's depth for deposits). Then the withdrawal is
 * COMPLETED, or FAILED with its debit credited back when the chain ran it and it failed (an EVM
 * token transfer that reverted: gas spent, nothing moved); the refund CONFIRMED at its block's
 * time, or NON_REFUNDABLE when it failed (its funds stay in the treasury, for an operator).
 * The signer's pass asks the chain about the payouts listed here, every minute.
 */
import { and, eq, isNotNull } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { deposits, refunds, withdrawals } from '../../../db/schema.js';
import { notifyPayment } from '../payments/index.js';
import { recordSettlement, type SettledPayout, type WithdrawalsDeps } from '../withdrawals/index.js';
import { UUID_RE } from '../../platform/validate.js';
import { transitionRefund } from './deposit-transitions.js';
import type { DepositsDeps } from './ports.js';

/**
 * The broadcast ids (as the payout jobs name them) of the payouts on `network` that may be on chain
 * and are not final: every PROCESSING withdrawal and every refund its job claimed, whether or not its
 * job got to record the hash (a job that keeps failing while the signer's pass sends the stored
 * transaction must not leave a payout made on chain PROCESSING for ever). The chain answers PENDING
 * for one it has nothing signed for.
 */
export async function unsettledPayouts(db: Database['db'], network: string): Promise<string[]> {
  const [sentWithdrawals, sentRefunds] = await Promise.all([
    db
      .select({ id: withdrawals.id })
      .from(withdrawals)
      .where(and(eq(withdrawals.network, network), eq(withdrawals.status, 'PROCESSING'))),
    db
      .select({ id: refunds.id })
      .from(refunds)
      .where(and(eq(refunds.network, network), eq(refunds.status, 'PENDING'), isNotNull(refunds.sendingSince))),
  ]);
  return [...sentWithdrawals.map((w) => `withdrawal:${w.id}`), ...sentRefunds.map((r) => `refund:${r.id}`)];
}

/** Record a payout final on chain. Idempotent: a payout already recorded, or not sent, is left as it is. */
export async function recordSettledPayout(
  deps: DepositsDeps & WithdrawalsDeps,
  broadcastId: string,
  settled: SettledPayout,
): Promise<'COMPLETED' | 'FAILED' | 'CONFIRMED' | 'NON_REFUNDABLE' | 'UNCHANGED' | 'NOT_A_PAYOUT'> {
  const [kind, id = ''] = broadcastId.split(':');
  if (!UUID_RE.test(id)) return 'NOT_A_PAYOUT';
  if (kind === 'withdrawal') {
    return (await recordSettlement(deps, id, settled)) ?? 'UNCHANGED';
  }
  if (kind !== 'refund') return 'NOT_A_PAYOUT';
  return deps.database.db.transaction(async (tx) => {
    const [refund] = await tx.select().from(refunds).where(eq(refunds.id, id)).for('update');
    if (!refund || refund.status !== 'PENDING' || refund.sendingSince === null) return 'UNCHANGED';
    if (settled.success) {
      await transitionRefund(tx, refund, 'CONFIRMED', 'confirmed on chain', deps.now(), { transactionId: settled.txHash, confirmedAt: settled.at });
    } else {
      await transitionRefund(tx, refund, 'NON_REFUNDABLE', `its transaction ${settled.txHash} failed on chain: the funds stay in the treasury`, deps.now(), {
        transactionId: settled.txHash,
      });
    }
    const [deposit] = await tx.select({ paymentId: deposits.paymentId }).from(deposits).where(eq(deposits.id, refund.depositId));
    if (deposit) await notifyPayment(tx, deposit.paymentId);
    return refund.status as 'CONFIRMED' | 'NON_REFUNDABLE';
  });
}
