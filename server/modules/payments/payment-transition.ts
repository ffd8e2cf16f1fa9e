/**
 * The one way a payment changes status: the one `transition`
 * (platform/state-machine.ts) over the payments row and its event row, in
 * the caller's transaction, and the `PaymentStatusChanged` event handed to
 * the subscribers in that same transaction (ports.ts).
 */
import type { Queryable } from '../../../db/client.js';
import { tableStore } from '../../../db/entity-store.js';
import { payments } from '../../../db/schema.js';
import { amend, transition } from '../../platform/state-machine.js';
import type { PaymentStatus } from '../money/index.js';
import { PAYMENT_MACHINE } from './payment-states.rules.js';
import type { PaymentStatusChanged, PaymentsDeps } from './ports.js';

const paymentStore = tableStore<PaymentStatus>({ entityType: 'payment', table: payments, machine: PAYMENT_MACHINE });

type Moved = { id: string; from: PaymentStatus; to: PaymentStatus; reason: string; at: Date };

/** Hands a payment's event, as `type`, to the subscribers in order, in the caller's transaction. */
const publisher =
  (deps: Pick<PaymentsDeps, 'paymentSubscribers'>, type: PaymentStatusChanged['type']) =>
  async (tx: Queryable, e: Moved): Promise<void> => {
    const event: PaymentStatusChanged = { type, paymentId: e.id, from: e.from, to: e.to, reason: e.reason, at: e.at };
    for (const subscriber of deps.paymentSubscribers) await subscriber(tx, event);
  };

/**
 * A deposit credited that leaves the payment's status as it is: an event row from the status to itself
 * (the payment's history, and the callback's sequence, count it) and `payment.deposit_credited` to the
 * subscribers, in the caller's transaction.
 */
export async function recordPaymentCredit(
  tx: Queryable,
  deps: Pick<PaymentsDeps, 'paymentSubscribers'>,
  payment: { id: string; status: string },
  reason: string,
  at: Date,
): Promise<void> {
  await amend(tx, paymentStore, payment, reason, at, { set: {} as never });
  const status = payment.status as PaymentStatus;
  await publisher(deps, 'payment.deposit_credited')(tx, { id: payment.id, from: status, to: status, reason, at });
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
  await transition(tx, paymentStore, payment, to, reason, at, { data, subscribers: [publisher(deps, 'payment.status_changed')] });
}
