/**
 * The payment state machine (CONTRACT §5) as a transition table: for each
 * status, the statuses it may move to. `transitionPayment` refuses anything
 * not listed here.
 */
import { PAYMENT_STATUSES, type PaymentStatus } from '../money/index.js';
import { defineStateMachine } from '../../platform/state-machine.js';

export const PAYMENT_MACHINE = defineStateMachine({
  name: 'Payment',
  states: PAYMENT_STATUSES,
  // Fiat-priced payments start NEW; crypto-priced ones get their address at once (PENDING).
  initial: ['NEW', 'PENDING'],
  transitions: {
    // Fiat-priced, currency not chosen yet.
    NEW: ['PENDING', 'EXPIRED'],
    // Address assigned, nothing seen yet.
    // FAILED needs a deposit seen first (AWAITING): a deposit is never created failed.
    PENDING: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE'],
    // Something seen but not final, or confirmed but short.
    // Once a deposit is seen the payment never goes back to waiting for one.
    AWAITING: ['DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE', 'FAILED'],
    // Covered. A later deposit on a REUSABLE payment, or a compliance block, can still move it; and a
    // credit the chain took back (CONTRACT §10) opens it again: AWAITING (what is left is short, or a
    // deposit is still in flight) or FAILED (every deposit failed on chain).
    DEPOSITED: ['AWAITING', 'OVERPAID', 'BLOCKED', 'FAILED'],
    OVERPAID: ['AWAITING', 'DEPOSITED', 'BLOCKED', 'FAILED'],
    // Terminal: later deposits are follow-ups and do not move the payment.
    EXPIRED: [],
    BLOCKED: [],
    // Not terminal while the payment is open: a correct deposit can still arrive.
    UNPROCESSABLE: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED'],
    FAILED: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE'],
  },
});

export const PAYMENT_TRANSITIONS = PAYMENT_MACHINE.transitions;

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_MACHINE.can(from, to);
}

/** Statuses after which a ONE_TIME payment takes no more money: later deposits are follow-ups. */
export const FINAL_PAYMENT_STATUSES: readonly PaymentStatus[] = ['DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED'];

/** Statuses a ONE_TIME payment can expire from (the table's own answer). */
export const EXPIRABLE_PAYMENT_STATUSES: readonly PaymentStatus[] = (Object.keys(PAYMENT_TRANSITIONS) as PaymentStatus[]).filter((s) =>
  canTransition(s, 'EXPIRED'),
);
