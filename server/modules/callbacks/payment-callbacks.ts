/**
 * The payment callback as a subscriber of payment status changes: when the
 * business has a paymentCallbackUrl, a signed callback with the record as
 * GET /v1/payments/:id shows it, queued in the transaction of the change.
 */
import { and, count, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { businesses, events, payments } from '../../../db/schema.js';
import { paymentRecord, type PaymentStatusChanged } from '../payments/index.js';
import { enqueueCallback } from './delivery.service.js';
import { paymentCallbackBody } from './payment-callback-body.rules.js';

export function paymentCallbackSubscriber(publicUrl: string) {
  return async (tx: Queryable, event: PaymentStatusChanged): Promise<void> => {
    const [row] = await tx
      .select({ payment: payments, url: businesses.paymentCallbackUrl })
      .from(payments)
      .innerJoin(businesses, eq(businesses.id, payments.businessId))
      .where(eq(payments.id, event.paymentId));
    if (!row?.url) return;
    // The payment's events so far, this change's included (written before its subscribers run):
    // one more with each change, since a change holds the payment's row.
    const [{ sequence }] = (await tx
      .select({ sequence: count() })
      .from(events)
      .where(and(eq(events.entityType, 'payment'), eq(events.entityId, event.paymentId)))) as [{ sequence: number }];
    const record = await paymentRecord(tx, row.payment, publicUrl);
    await enqueueCallback(
      tx,
      { businessId: row.payment.businessId, kind: 'PAYMENT', subjectId: event.paymentId, url: row.url, body: paymentCallbackBody(record, event.from, event.at, sequence, event.type) },
      event.at,
    );
  };
}
