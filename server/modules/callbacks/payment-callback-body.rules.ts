/**
 * The payment status callback (CONTRACT §6: sent to `paymentCallbackUrl` on
 * every payment status change, signed and retried like withdrawal
 * callbacks). Pure: the event and the payment record as GET /v1/payments/:id
 * returns it at that moment. `sequence` orders a payment's callbacks: a retry
 * may arrive after a later change's callback, and changes of one transaction
 * share their `changedAt`.
 */
import type { PaymentRecord } from '../payments/index.js';

export function paymentCallbackBody(
  record: PaymentRecord,
  previousStatus: string | null,
  changedAt: Date,
  sequence: number,
  type: 'payment.status_changed' | 'payment.deposit_credited' = 'payment.status_changed',
): Record<string, unknown> {
  return {
    type,
    paymentId: record.paymentId,
    clientPaymentId: record.clientPaymentId,
    businessId: record.businessId,
    status: record.status,
    previousStatus,
    changedAt: Math.floor(changedAt.getTime() / 1000),
    sequence,
    payment: record,
  };
}
