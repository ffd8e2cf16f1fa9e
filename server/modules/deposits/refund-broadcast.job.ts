/**
 * The `broadcast_refund` job's work: claim the refund (only once its deposit
 * is confirmed on chain), send it outside any transaction (idempotent per
 * refund id, so a retry after a crash sends the same transaction), then
 * record it in a transaction of its own: CONFIRMED when the chain says it is
 * final at once (the sandbox), else PENDING with its hash until the chain's
 * depth settles it (payout-settled.ts).
 */
import { eq } from 'drizzle-orm';
import { deposits, refunds } from '../../../db/schema.js';
import { Dec, type Network } from '../money/index.js';
import { chainFor, type ChainPorts } from '../networks/ports.js';
import { notifyPayment } from '../payments/index.js';
import { amendRefund, transitionRefund } from './deposit-transitions.js';
import type { DepositsDeps } from './ports.js';

/**
 * Claim a PENDING refund for sending: under the row's lock, so that a deposit leaving the chain
 * (which cancels unclaimed refunds under the same lock) either comes first, and nothing is sent,
 * or after, and the refund is sent. A deposit not confirmed on chain yet is not claimed: its
 * confirmation enqueues this job again. Once claimed, a retry sends whatever the chain does since.
 */
async function claim(deps: DepositsDeps, refundId: string): Promise<{ send: typeof refunds.$inferSelect } | { outcome: string }> {
  return deps.database.db.transaction(async (tx) => {
    const [refund] = await tx.select().from(refunds).where(eq(refunds.id, refundId)).for('update');
    if (!refund) return { outcome: 'MISSING' };
    if (refund.status !== 'PENDING') return { outcome: refund.status };
    if (refund.sendingSince) return { send: refund };
    const [deposit] = await tx.select({ chainStatus: deposits.chainStatus }).from(deposits).where(eq(deposits.id, refund.depositId));
    if (deposit?.chainStatus !== 'CONFIRMED') return { outcome: 'WAITING_FOR_DEPOSIT' };
    await tx.update(refunds).set({ sendingSince: deps.now() }).where(eq(refunds.id, refundId));
    return { send: refund };
  });
}

/** Send a PENDING refund (amount less the network fee) and record it. Idempotent. */
export async function broadcastRefund(deps: DepositsDeps, chains: ChainPorts, refundId: string): Promise<string> {
  const db = deps.database.db;
  const claimed = await claim(deps, refundId);
  if ('outcome' in claimed) return claimed.outcome;
  const refund = claimed.send;
  const network = refund.network as Network;
  const sent = await chainFor(chains, network).broadcast({
    id: `refund:${refund.id}`,
    network,
    currency: refund.depositCurrency,
    toAddress: refund.toAddress,
    amount: new Dec(refund.amount).sub(refund.fee).toFixed(),
  });
  return db.transaction(async (tx) => {
    const [locked] = await tx.select().from(refunds).where(eq(refunds.id, refundId)).for('update');
    // Another attempt recorded it meanwhile: the broadcast was the same transaction.
    if (!locked || locked.status !== 'PENDING') return locked?.status ?? 'MISSING';
    const { confirmedAt } = sent;
    if (confirmedAt) {
      await transitionRefund(tx, locked, 'CONFIRMED', 'broadcast confirmed', confirmedAt, { transactionId: sent.txHash, confirmedAt });
    } else if (locked.transactionId === null) {
      // On its way: PENDING with its hash until its block is deep enough (payout-settled.ts).
      await amendRefund(tx, locked, 'broadcast: final once its block is deep enough', deps.now(), { transactionId: sent.txHash }, { transactionId: sent.txHash });
    } else {
      return 'PENDING';
    }
    const [deposit] = await tx.select({ paymentId: deposits.paymentId }).from(deposits).where(eq(deposits.id, locked.depositId));
    if (deposit) await notifyPayment(tx, deposit.paymentId);
    return confirmedAt ? 'CONFIRMED' : 'PENDING';
  });
}
