/**
 * What payments need from outside, and what they tell the outside.
 *
 * Payments never import checkout or callbacks: every status change is a
 * `PaymentStatusChanged` event handed, inside the transaction that makes
 * the change, to the subscribers the composition root lists (the live
 * checkout's pg_notify, the payment callback, metrics). Whatever they write
 * (a NOTIFY, a delivery row and its job) commits or rolls back with the change.
 */
import type { Database, Queryable } from '../../../db/client.js';
import type { PaymentStatus, RatesPort } from '../money/index.js';
import type { PlatformDeps } from '../../platform/runtime.js';
import type { NetworkAccess } from '../networks/index.js';

export type PaymentStatusChanged = {
  type: 'payment.status_changed';
  paymentId: string;
  from: PaymentStatus;
  to: PaymentStatus;
  reason: string;
  at: Date;
};

/** Runs inside the transaction of the change (`tx`); throwing rolls the change back. */
export type PaymentEventSubscriber = (tx: Queryable, event: PaymentStatusChanged) => Promise<void>;

/** What the payments module is given by the composition root. */
export type PaymentsDeps = PlatformDeps & {
  database: Database;
  rates: RatesPort;
  /** The networks offered, their deposit addresses and destination formats (sandbox or live). */
  networks: NetworkAccess;
  /** Called in order, in the transaction of each status change. */
  paymentSubscribers: readonly PaymentEventSubscriber[];
};
