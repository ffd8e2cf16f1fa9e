/**
 * What payments need from outside, and what they tell the outside.
 *
 * Payments never import checkout or callbacks: every status change is a
 * `PaymentStatusChanged` event handed, inside the transaction that makes
 * the change, to the subscribers the composition root lists (the live
 * checkout's pg_notify, the payment callback, metrics). Whatever they write
 * (a NOTIFY, a delivery row and its job) commits or rolls back with the change.
 */
import type { Queryable } from '../../../db/client.js';
import type { PaymentStatus } from '../money/index.js';
import type { Subscriber } from '../../platform/state-machine.js';
import type { NetworkDeps } from '../networks/index.js';

/**
 * `payment.status_changed`: the status moved. `payment.deposit_credited`: a deposit was credited and the
 * status stayed (a REUSABLE payment's next deposit, a partial one while AWAITING, a late one to an
 * EXPIRED payment): `from` equals `to`, and the merchant still hears of the money.
 */
export type PaymentStatusChanged = {
  type: 'payment.status_changed' | 'payment.deposit_credited';
  paymentId: string;
  from: PaymentStatus;
  to: PaymentStatus;
  reason: string;
  at: Date;
};

export type PaymentEventSubscriber = Subscriber<Queryable, PaymentStatusChanged>;

/** What the payments module is given by the composition root; its subscribers are called in order, in the transaction of each status change. */
export type PaymentsDeps = NetworkDeps & { paymentSubscribers: readonly PaymentEventSubscriber[] };
