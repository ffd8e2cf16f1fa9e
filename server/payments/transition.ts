/**
 * The one way a payment changes status: a checked compare-and-set on the
 * row plus an append-only event row, in the caller's transaction.
 */
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { paymentEvents, payments } from '../../db/schema.js';
import { KassaError } from '../errors.js';
import type { PaymentStatus } from '../money/catalog.js';
import { canTransition } from './payment-states.js';
import { notifyPayment } from '../checkout/live-updates.js';

export class IllegalTransitionError extends KassaError {
  constructor(paymentId: string, from: PaymentStatus, to: PaymentStatus) {
    super(409, 'ILLEGAL_TRANSITION', `Payment ${paymentId} cannot move from ${from} to ${to}.`);
  }
}

export async function transitionPayment(
  tx: Queryable,
  payment: { id: string; status: string },
  to: PaymentStatus,
  reason: string,
  at: Date,
  data: Record<string, unknown> = {},
): Promise<void> {
  const from = payment.status as PaymentStatus;
  if (!canTransition(from, to)) throw new IllegalTransitionError(payment.id, from, to);
  const updated = await tx
    .update(payments)
    .set({ status: to })
    .where(and(eq(payments.id, payment.id), eq(payments.status, from)))
    .returning({ id: payments.id });
  // Someone else moved it first: the caller's view is stale, so refuse rather than overwrite.
  if (updated.length === 0) throw new KassaError(409, 'CONCURRENT_UPDATE', `Payment ${payment.id} changed concurrently.`);
  await tx.insert(paymentEvents).values({ paymentId: payment.id, fromStatus: from, toStatus: to, reason, data, at });
  await notifyPayment(tx, payment.id);
  payment.status = to;
}

/** The first event of a payment: its creation in `status`. */
export async function recordPaymentCreated(tx: Queryable, paymentId: string, status: PaymentStatus, at: Date): Promise<void> {
  await tx.insert(paymentEvents).values({ paymentId, fromStatus: null, toStatus: status, reason: 'created', at });
}
