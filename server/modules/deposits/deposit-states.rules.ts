/**
 * Deposit and refund state machines (CONTRACT §5) as transition tables.
 * `null` is the state before the first event (creation).
 */
import type { DepositStatus } from '../money/index.js';

export type RefundStatus = 'PENDING' | 'CONFIRMED' | 'NON_REFUNDABLE';

export const DEPOSIT_TRANSITIONS: Record<DepositStatus | 'CREATED', readonly DepositStatus[]> = {
  CREATED: ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE'],
  // An operator decides; meanwhile the chain may confirm or drop it.
  COMPLIANCE_REVIEW: ['UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'FAILED', 'UNPROCESSABLE'],
  UNCONFIRMED: ['CONFIRMED', 'FAILED'],
  CONFIRMED: [],
  BLOCKED: [],
  UNPROCESSABLE: [],
  FAILED: [],
};

export const REFUND_TRANSITIONS: Record<RefundStatus | 'CREATED', readonly RefundStatus[]> = {
  CREATED: ['PENDING', 'NON_REFUNDABLE'],
  PENDING: ['CONFIRMED'],
  CONFIRMED: [],
  NON_REFUNDABLE: [],
};

export const canMoveDeposit = (from: DepositStatus | null, to: DepositStatus) =>
  DEPOSIT_TRANSITIONS[from ?? 'CREATED'].includes(to);

export const canMoveRefund = (from: RefundStatus | null, to: RefundStatus) => REFUND_TRANSITIONS[from ?? 'CREATED'].includes(to);
