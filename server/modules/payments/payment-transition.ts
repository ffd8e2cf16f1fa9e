/**
 * The one way a payment changes status: the one `transition`
 * (platform/state-machine.ts) over the payments row and its event row, in
 * the caller's transaction, and the `PaymentStatusChanged` event handed to
 * the subscribers in that same transaction (ports.ts).
 */
import type { Queryable } from '../../../db/client.js';
import { tableStore } from '../../../db/entity-store.js';
import { payments } from '../../../db/schema.js';
import { transition } from '../../platform/state-machine.js';
import type { PaymentStatus } from '../money/index.js';
import { PAYMENT_MACHINE } from './payment-states.rules.js';
import type { PaymentsDeps } from './ports.js';

const paymentStore = tableStore<PaymentStatus>({ entityType: 'payment', table: payments, machine: PAYMENT_MACHINE });

export async function transitionPayment(
  tx: Queryable,
  deps: Pick<PaymentsDeps, 'paymentSubscribers'>,
  payment: { id: string; status: string },
  to: PaymentStatus,
  reason: string,
  at: Date,
  data: Record<string, unknown> = {},
): Promise<void> {
  const publish = async (t: Queryable, e: { id: string; from: PaymentStatus; to: PaymentStatus; reason: string; at: Date }) => {
    const event = { type: 'payment.status_changed', paymentId: e.id, from: e.from, to: e.to, reason: e.reason, at: e.at } as const;
    for (const subscriber of deps.paymentSubscribers) await subscriber(t, event);
  };
  await transition(tx, paymentStore, payment, to, reason, at, { data, subscribers: [publish] });
}
