/**
 * A payout's transaction replaced on chain: the signer re-signed it at a higher fee (same nonce)
 * or found an earlier version of it mined (evm/signer.ts `tendPending`). The withdrawal or refund
 * that sent it then shows the hash that is, or will be, on chain (CONTRACT §10: `transactionId`
 * is the real hash). Not a status change: an event row with the same status keeps the old hash.
 */
import { eq } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { deposits, refunds, withdrawals } from '../../../db/schema.js';
import { notifyPayment } from '../payments/index.js';
import { amendWithdrawal } from '../withdrawals/index.js';
import { UUID_RE } from '../../platform/validate.js';
import { amendRefund } from './deposit-transitions.js';

/** The broadcast ids Kassa's payout jobs use (withdrawal-broadcast.job.ts, refund-broadcast.job.ts) and the rows behind them. */
const HOLDERS = [
  { prefix: 'withdrawal:', table: withdrawals, amend: amendWithdrawal },
  { prefix: 'refund:', table: refunds, amend: amendRefund },
] as const;

export type ReplacedOutcome = 'RECORDED' | 'UNCHANGED' | 'NOT_A_PAYOUT';

export async function recordReplacedPayout(db: Database['db'], broadcastId: string, txHash: string, at: Date): Promise<ReplacedOutcome> {
  const holder = HOLDERS.find((h) => broadcastId.startsWith(h.prefix));
  const id = holder ? broadcastId.slice(holder.prefix.length) : '';
  // Sweeps and gas top-ups are Kassa's own transfers: no record shows their hash.
  if (!holder || !UUID_RE.test(id)) return 'NOT_A_PAYOUT';
  const { table } = holder;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ id: table.id, status: table.status, transactionId: table.transactionId })
      .from(table)
      .where(eq(table.id, id))
      .for('update');
    // Not recorded yet (its job records the hash it sent; the next pass brings this one), or already it.
    if (!row || row.transactionId === null || row.transactionId === txHash) return 'UNCHANGED';
    await holder.amend(
      tx,
      row,
      'its transaction was replaced at a higher fee, or an earlier version of it was mined: transactionId is the hash on chain',
      at,
      { transactionId: txHash },
      { previousTransactionId: row.transactionId, transactionId: txHash },
    );
    // An open checkout shows a refund's hash: tell it (the GET cache sees the row's new version by itself).
    if (table === refunds) {
      const [deposit] = await tx.select({ paymentId: deposits.paymentId }).from(deposits).innerJoin(refunds, eq(refunds.depositId, deposits.id)).where(eq(refunds.id, id));
      if (deposit) await notifyPayment(tx, deposit.paymentId);
    }
    return 'RECORDED';
  });
}
