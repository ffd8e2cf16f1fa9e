/**
 * Deposits' and refunds' rows and event rows, for the one `transition`
 * (platform/state-machine.ts): checked against their machines,
 * compare-and-set on the row, plus an append-only event row, in the
 * caller's transaction.
 */
import type { Queryable } from '../../../db/client.js';
import { tableStore } from '../../../db/entity-store.js';
import { deposits, refunds } from '../../../db/schema.js';
import { amend, recordCreated, transition, type EntityStore } from '../../platform/state-machine.js';
import type { DepositStatus } from '../money/index.js';
import { DEPOSIT_MACHINE, REFUND_MACHINE, type RefundStatus } from './deposit-states.rules.js';

const depositStore = tableStore<DepositStatus>({
  entityType: 'deposit',
  table: deposits,
  machine: DEPOSIT_MACHINE,
  alsoSet: (to, at) => (to === 'CONFIRMED' ? { confirmedAt: at } : {}),
});

type RefundSet = Partial<typeof refunds.$inferInsert>;

const refundStore = tableStore<RefundStatus, RefundSet>({ entityType: 'refund', table: refunds, machine: REFUND_MACHINE });

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

/** A refund's columns changed, its status kept (platform/state-machine.ts `amend`). */
export const amendRefund = (tx: Queryable, refund: { id: string; status: string }, reason: string, at: Date, set: RefundSet, data: Record<string, unknown> = {}) =>
  amend(tx, refundStore, refund, reason, at, { set, data });
