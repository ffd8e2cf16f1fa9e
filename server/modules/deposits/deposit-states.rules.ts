/**
 * Deposit and refund state machines (CONTRACT §5) as transition tables.
 * `null` is the state before the first event (creation).
 */
import { DEPOSIT_STATUSES, REFUND_STATUSES, type DepositStatus } from '../money/index.js';
import { defineStateMachine } from '../../platform/state-machine.js';

export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const DEPOSIT_MACHINE = defineStateMachine({
  name: 'Deposit',
  states: DEPOSIT_STATUSES,
  initial: ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE'],
  transitions: {
    // An operator decides; meanwhile the chain may confirm or drop it.
    COMPLIANCE_REVIEW: ['UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'FAILED', 'UNPROCESSABLE'],
    UNCONFIRMED: ['CONFIRMED', 'FAILED'],
    // Reorganised off the chain for good after it was credited: the credit is reversed (CONTRACT §10).
    CONFIRMED: ['FAILED'],
    BLOCKED: [],
    // Back on the chain after it was dropped, its sender now listed: frozen like a first sighting.
    UNPROCESSABLE: ['BLOCKED'],
    // Failed on chain, then back on it (mined again after a reorganisation): judged again as when first seen.
    FAILED: ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE'],
  },
});

export const REFUND_MACHINE = defineStateMachine({
  name: 'Refund',
  states: REFUND_STATUSES,
  initial: ['PENDING', 'NON_REFUNDABLE'],
  transitions: {
    // NON_REFUNDABLE: its deposit left the chain before the broadcast job claimed it.
    PENDING: ['CONFIRMED', 'NON_REFUNDABLE'],
    CONFIRMED: [],
    // PENDING: a refund its deposit's leaving cancelled, now that the deposit is back on the chain.
    NON_REFUNDABLE: ['PENDING'],
  },
});

export const canMoveDeposit = (from: DepositStatus | null, to: DepositStatus) => DEPOSIT_MACHINE.can(from, to);

export const canMoveRefund = (from: RefundStatus | null, to: RefundStatus) => REFUND_MACHINE.can(from, to);
