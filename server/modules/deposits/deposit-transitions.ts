/**
 * Deposits' and refunds' rows and event rows, for the one `transition`
 * (platform/state-machine.ts): checked against their machines,
 * compare-and-set on the row, plus an append-only event row, in the
 * caller's transaction.
 */
import type { Queryable } from '../../../db/client.js';
import { depositEvents, deposits, refundEvents, refunds } from '../../../db/schema.js';
import { compareAndSetStatus } from '../../../db/status.js';
import { recordCreated, transition, type EntityStore } from '../../platform/state-machine.js';
import type { DepositStatus } from '../money/index.js';
import { DEPOSIT_MACHINE, REFUND_MACHINE, type RefundStatus } from './deposit-states.rules.js';

const depositStore: EntityStore<Queryable, DepositStatus, never> = {
  machine: DEPOSIT_MACHINE,
  update: (tx, id, from, to, _set, at) => compareAndSetStatus(tx, deposits, id, from, to, to === 'CONFIRMED' ? { confirmedAt: at } : {}),
  record: async (tx, e) => {
    await tx.insert(depositEvents).values({ depositId: e.id, fromStatus: e.from, toStatus: e.to, reason: e.reason, data: e.data, at: e.at });
  },
};

type RefundSet = Partial<typeof refunds.$inferInsert>;

const refundStore: EntityStore<Queryable, RefundStatus, RefundSet> = {
  machine: REFUND_MACHINE,
  update: (tx, id, from, to, set) => compareAndSetStatus(tx, refunds, id, from, to, set),
  // Refund events carry no data column.
  record: async (tx, e) => {
    await tx.insert(refundEvents).values({ refundId: e.id, fromStatus: e.from, toStatus: e.to, reason: e.reason, at: e.at });
  },
};

export const recordDepositCreated = (tx: Queryable, id: string, status: DepositStatus, reason: string, at: Date, data: Record<string, unknown> = {}) =>
  recordCreated(tx, depositStore, id, status, reason, at, data);

export const transitionDeposit = (
  tx: Queryable,
  deposit: { id: string; status: string },
  to: DepositStatus,
  reason: string,
  at: Date,
  data: Record<string, unknown> = {},
) => transition(tx, depositStore, deposit, to, reason, at, { data });

export const recordRefundCreated = (tx: Queryable, id: string, status: RefundStatus, reason: string, at: Date) =>
  recordCreated(tx, refundStore as EntityStore<Queryable, RefundStatus, never>, id, status, reason, at);

export const transitionRefund = (tx: Queryable, refund: { id: string; status: string }, to: RefundStatus, reason: string, at: Date, set: RefundSet = {}) =>
  transition(tx, refundStore, refund, to, reason, at, { set });
