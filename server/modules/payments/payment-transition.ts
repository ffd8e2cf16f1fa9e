/**
 * The one way a payment changes status: a checked compare-and-set on the
 * row plus an append-only event row, in the caller's transaction.
 */
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { businesses, paymentEvents, payments } from '../../../db/schema.js';
import { enqueueCallback } from '../callbacks/delivery.service.js';
import { paymentCallbackBody } from '../callbacks/payment-callback-body.rules.js';
import { paymentRecord } from './payment.service.js';
import type { Deps } from '../../deps.js';
import { KassaError } from '../../platform/errors.js';
import type { PaymentStatus } from '../money/catalog.js';
import { canTransition } from './payment-states.rules.js';
import { notifyPayment } from './live-updates.js';

export class IllegalTransitionError extends KassaError {
  constructor(paymentId: string, from: PaymentStatus, to: PaymentStatus) {
    super(409, 'ILLEGAL_TRANSITION', `Payment ${paymentId} cannot move from ${from} to ${to}.`);
  }
}

export async function transitionPayment(
  tx: Queryable,
  deps: Deps,
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
  await enqueuePaymentCallback(tx, deps, payment.id, from, at);
}

/** When the business has a paymentCallbackUrl: a signed callback with the record, in this transaction. */
async function enqueuePaymentCallback(tx: Queryable, deps: Deps, paymentId: string, previousStatus: string | null, at: Date): Promise<void> {
  const [row] = await tx
    .select({ payment: payments, url: businesses.paymentCallbackUrl })
    .from(payments)
    .innerJoin(businesses, eq(businesses.id, payments.businessId))
    .where(eq(payments.id, paymentId));
  if (!row?.url) return;
  // payment-service imports this module too; the cycle is harmless as both only call each other at run time.
  const record = await paymentRecord(tx, row.payment, deps.config.publicUrl);
  await enqueueCallback(
    tx,
    { businessId: row.payment.businessId, kind: 'PAYMENT', subjectId: paymentId, url: row.url, body: paymentCallbackBody(record, previousStatus, at) },
    at,
  );
}
