/**
 * The `broadcast_refund` job's work: read the refund, send it outside any
 * transaction (idempotent per refund id, so a retry after a crash sends the
 * same transaction), then record CONFIRMED in a transaction of its own.
 */
import { eq } from 'drizzle-orm';
import { deposits, refunds } from '../../../db/schema.js';
import { Dec, type Network } from '../money/index.js';
import { chainFor, type ChainPorts } from '../networks/ports.js';
import { notifyPayment } from '../payments/index.js';
import { transitionRefund } from './deposit-transitions.js';
import type { DepositsDeps } from './ports.js';

/** Send a PENDING refund (amount less the network fee) and mark it CONFIRMED. Idempotent. */
export async function broadcastRefund(deps: DepositsDeps, chains: ChainPorts, refundId: string): Promise<string> {
  const db = deps.database.db;
  const [refund] = await db.select().from(refunds).where(eq(refunds.id, refundId));
  if (!refund) return 'MISSING';
  if (refund.status !== 'PENDING') return refund.status;
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
    const confirmedAt = sent.confirmedAt ?? deps.now();
    await transitionRefund(tx, locked, 'CONFIRMED', 'broadcast confirmed', confirmedAt, { transactionId: sent.txHash, confirmedAt });
    const [deposit] = await tx.select({ paymentId: deposits.paymentId }).from(deposits).where(eq(deposits.id, locked.depositId));
    if (deposit) await notifyPayment(tx, deposit.paymentId);
    return 'CONFIRMED';
  });
}
