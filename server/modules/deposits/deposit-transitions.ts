/**
 * The one way a deposit or a refund changes status: checked against its
 * transition table, compare-and-set on the row, plus an append-only event
 * row, in the caller's transaction.
 */
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { depositEvents, deposits, refundEvents, refunds } from '../../../db/schema.js';
import { KassaError } from '../../platform/errors.js';
import type { DepositStatus } from '../money/index.js';
import { canMoveDeposit, canMoveRefund, type RefundStatus } from './deposit-states.rules.js';

const illegal = (what: string, id: string, from: string | null, to: string) =>
  new KassaError(409, 'ILLEGAL_TRANSITION', `${what} ${id} cannot move from ${from ?? '(new)'} to ${to}.`);
const concurrent = (what: string, id: string) => new KassaError(409, 'CONCURRENT_UPDATE', `${what} ${id} changed concurrently.`);

export async function recordDepositCreated(tx: Queryable, id: string, status: DepositStatus, reason: string, at: Date, data: Record<string, unknown> = {}) {
  if (!canMoveDeposit(null, status)) throw illegal('Deposit', id, null, status);
  await tx.insert(depositEvents).values({ depositId: id, fromStatus: null, toStatus: status, reason, data, at });
}

export async function transitionDeposit(
  tx: Queryable,
  deposit: { id: string; status: string },
  to: DepositStatus,
  reason: string,
  at: Date,
  data: Record<string, unknown> = {},
): Promise<void> {
  const from = deposit.status as DepositStatus;
  if (!canMoveDeposit(from, to)) throw illegal('Deposit', deposit.id, from, to);
  const updated = await tx
    .update(deposits)
    .set({ status: to, ...(to === 'CONFIRMED' ? { confirmedAt: at } : {}) })
    .where(and(eq(deposits.id, deposit.id), eq(deposits.status, from)))
    .returning({ id: deposits.id });
  if (updated.length === 0) throw concurrent('Deposit', deposit.id);
  await tx.insert(depositEvents).values({ depositId: deposit.id, fromStatus: from, toStatus: to, reason, data, at });
  deposit.status = to;
}

export async function recordRefundCreated(tx: Queryable, id: string, status: RefundStatus, reason: string, at: Date) {
  if (!canMoveRefund(null, status)) throw illegal('Refund', id, null, status);
  await tx.insert(refundEvents).values({ refundId: id, fromStatus: null, toStatus: status, reason, at });
}

export async function transitionRefund(
  tx: Queryable,
  refund: { id: string; status: string },
  to: RefundStatus,
  reason: string,
  at: Date,
  set: Partial<typeof refunds.$inferInsert> = {},
): Promise<void> {
  const from = refund.status as RefundStatus;
  if (!canMoveRefund(from, to)) throw illegal('Refund', refund.id, from, to);
  const updated = await tx
    .update(refunds)
    .set({ ...set, status: to })
    .where(and(eq(refunds.id, refund.id), eq(refunds.status, from)))
    .returning({ id: refunds.id });
  if (updated.length === 0) throw concurrent('Refund', refund.id);
  await tx.insert(refundEvents).values({ refundId: refund.id, fromStatus: from, toStatus: to, reason, at });
  refund.status = to;
}
