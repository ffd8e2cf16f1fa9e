/**
 * Refunds (spec §2.7, CONTRACT §5): created by the deposit rules, sent back
 * to the sending address through the chain adapter by the `broadcast_refund`
 * job. A refund that would not exceed the network fee is NON_REFUNDABLE, as
 * is one for an illicit deposit (the funds are frozen).
 *
 * A refund is sent only once its deposit is confirmed on chain: a deposit of
 * the wrong currency is refunded as soon as it is seen, and sending that back
 * before it confirms would let a sender double-spend the deposit and keep the
 * refund. So the job is enqueued when the deposit confirms, and a refund whose
 * deposit leaves the chain before the job claimed it is NON_REFUNDABLE.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { deposits, refunds } from '../../../db/schema.js';
import { enqueue } from '../../../jobs/enqueue.js';
import { NETWORK_FEES, type CryptoCurrency, type Network } from '../money/index.js';
import { Dec } from '../money/index.js';
import { amendRefund, recordRefundCreated, transitionRefund } from './deposit-transitions.js';

export type RefundReason = 'OVERPAYMENT' | 'CURRENCY_MISMATCH' | 'FOLLOW_UP_DEPOSIT' | 'RESTRICTED_CURRENCY' | 'ILLICIT_DEPOSIT';
type DepositRow = typeof deposits.$inferSelect;

/** A delisted ERC-20 token is sent back at the cost of a token transfer: 1 unit in the sandbox. */
const UNLISTED_TOKEN_FEE = '1';

export function networkFee(currency: string, network: string): Dec {
  return new Dec(NETWORK_FEES[currency as CryptoCurrency]?.[network as Network] ?? UNLISTED_TOKEN_FEE);
}

export async function createRefund(
  tx: Queryable,
  deposit: DepositRow,
  spec: { type: 'FULL' | 'PARTIAL'; reason: RefundReason; amount: Dec },
  at: Date,
): Promise<typeof refunds.$inferSelect> {
  const fee = networkFee(deposit.depositCurrency, deposit.network);
  const frozen = spec.reason === 'ILLICIT_DEPOSIT';
  const status = frozen || spec.amount.lte(fee) ? 'NON_REFUNDABLE' : 'PENDING';
  const rate = new Dec(deposit.rateDisplay);
  const [row] = await tx
    .insert(refunds)
    .values({
      depositId: deposit.id,
      type: spec.type,
      status,
      reason: spec.reason,
      depositCurrency: deposit.depositCurrency,
      network: deposit.network,
      toAddress: deposit.fromAddress,
      amount: spec.amount.toFixed(),
      fee: fee.toFixed(),
      displayCurrency: deposit.displayCurrency,
      displayAmount: spec.amount.mul(rate).toFixed(),
      displayFee: fee.mul(rate).toFixed(),
      createdAt: at,
    })
    .returning();
  await recordRefundCreated(tx, row!.id, status, frozen ? 'funds frozen: illicit deposit' : status === 'PENDING' ? spec.reason : 'amount does not exceed the network fee', at);
  if (status === 'PENDING' && deposit.chainStatus === 'CONFIRMED') await scheduleRefund(tx, row!.id);
  return row!;
}

const scheduleRefund = (tx: Queryable, refundId: string) =>
  enqueue(tx, 'broadcast_refund', { refundId }, { jobKey: `broadcast_refund:${refundId}` });

type RefundRow = typeof refunds.$inferSelect;

/** The deposit's refund, locked: a deposit has at most one (`refunds.deposit_id` is unique). */
async function refundOf(tx: Queryable, depositId: string): Promise<RefundRow | null> {
  const [row] = await tx.select().from(refunds).where(eq(refunds.depositId, depositId)).for('update');
  return row ?? null;
}

/**
 * Never sent and not frozen: cancelled because its deposit left the chain, or not above its fee
 * when it was created. For a deposit back on the chain it may be sent after all, for what is now
 * to be refunded.
 */
const unsentAndFree = (r: RefundRow) =>
  r.status === 'NON_REFUNDABLE' && r.reason !== 'ILLICIT_DEPOSIT' && r.transactionId === null && r.sendingSince === null;

/** What the deposit's refund sends back to its sender: its amount once sent or being sent (PENDING, CONFIRMED), else 0. */
export async function sentBack(tx: Queryable, depositId: string): Promise<Dec> {
  const refund = await refundOf(tx, depositId);
  return refund && (refund.status === 'PENDING' || refund.status === 'CONFIRMED') ? new Dec(refund.amount) : new Dec(0);
}

/**
 * Refund a deposit: a new refund; or, for a deposit back on the chain whose refund was never sent
 * (its leaving cancelled it, or it was not above the fee), that refund PENDING again, for
 * `spec.amount`, sent once the deposit confirms (or, for an illicit deposit, that refund frozen in
 * its place). A refund sent, being sent or frozen stays as it is: one refund a deposit, and nothing
 * is sent back twice.
 */
export async function refundDeposit(
  tx: Queryable,
  deposit: DepositRow,
  spec: { type: 'FULL' | 'PARTIAL'; reason: RefundReason; amount: Dec },
  at: Date,
): Promise<void> {
  const existing = await refundOf(tx, deposit.id);
  if (!existing) {
    await createRefund(tx, deposit, spec, at);
    return;
  }
  if (!unsentAndFree(existing)) return;
  const rate = new Dec(deposit.rateDisplay);
  if (spec.reason === 'ILLICIT_DEPOSIT') {
    // Blocked on its way back: the unsent refund becomes the frozen one (still never sent), with an event.
    const set = { type: spec.type, reason: spec.reason, amount: spec.amount.toFixed(), displayAmount: spec.amount.mul(rate).toFixed() };
    await amendRefund(tx, existing, 'funds frozen: illicit deposit', at, set, { previous: { type: existing.type, reason: existing.reason, amount: existing.amount } });
    return;
  }
  // A refund not above its fee is not worth sending.
  if (spec.amount.lte(existing.fee)) return;
  await transitionRefund(tx, existing, 'PENDING', 'its deposit is back on the chain', at, {
    type: spec.type,
    reason: spec.reason,
    amount: spec.amount.toFixed(),
    displayAmount: spec.amount.mul(rate).toFixed(),
  });
  if (deposit.chainStatus === 'CONFIRMED') await scheduleRefund(tx, existing.id);
}

/** The refund of a deposit not yet claimed by the broadcast job, locked; null when there is none. */
async function unsentRefund(tx: Queryable, depositId: string) {
  const [row] = await tx
    .select()
    .from(refunds)
    .where(and(eq(refunds.depositId, depositId), eq(refunds.status, 'PENDING'), isNull(refunds.sendingSince)))
    .for('update');
  return row ?? null;
}

/** The deposit is now confirmed on chain: its PENDING refund may be sent. */
export async function releaseRefund(tx: Queryable, depositId: string): Promise<void> {
  const refund = await unsentRefund(tx, depositId);
  if (refund) await scheduleRefund(tx, refund.id);
}

/** The deposit left the chain: a refund not yet claimed by the broadcast job is never sent. */
export async function cancelUnsentRefund(tx: Queryable, depositId: string, at: Date): Promise<void> {
  const refund = await unsentRefund(tx, depositId);
  if (refund) await transitionRefund(tx, refund, 'NON_REFUNDABLE', 'its deposit left the chain before the refund was sent', at);
}
