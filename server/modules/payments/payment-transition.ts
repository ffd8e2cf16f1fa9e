/**
 * The one way a payment changes status: a checked compare-and-set on the
 * row plus an append-only event row, in the caller's transaction, and the
 * `PaymentStatusChanged` event handed to the subscribers in that same
 * transaction (ports.ts).
 */
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { paymentEvents, payments } from '../../../db/schema.js';
import { KassaError } from '../../platform/errors.js';
import type { PaymentStatus } from '../money/index.js';
import { canTransition } from './payment-states.rules.js';
import type { PaymentsDeps } from './ports.js';

export class IllegalTransitionError extends KassaError {
  constructor(paymentId: string, from: PaymentStatus, to: PaymentStatus) {
    super(409, 'ILLEGAL_TRANSITION', `Payment ${paymentId} cannot move from ${from} to ${to}.`);
  }
}

export async function transitionPayment(
  tx: Queryable,
  deps: Pick<PaymentsDeps, 'paymentSubscribers'>,
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
  payment.status = to;
  const event = { type: 'payment.status_changed', paymentId: payment.id, from, to, reason, at } as const;
  for (const subscriber of deps.paymentSubscribers) await subscriber(tx, event);
}
