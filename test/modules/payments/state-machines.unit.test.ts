/**
 * The payment, deposit and refund state machines (CONTRACT §5) and the rule
 * that derives a payment's status from its deposits.
 *
 * The expected transition tables below are written out by hand from the
 * meaning CONTRACT §5 gives each state — never copied from, or computed
 * with, the code's own tables. Every (from, to) pair over all states is
 * checked: a row's allowed targets must be exactly the expected ones.
 */
import { describe, expect, it } from 'vitest';
import { DEPOSIT_STATUSES, PAYMENT_STATUSES, type DepositStatus, type PaymentStatus } from '../../../server/modules/money/catalog.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import { canMoveDeposit, canMoveRefund, type RefundStatus } from '../../../server/modules/deposits/deposit-states.rules.js';
import { canTransition } from '../../../server/modules/payments/payment-states.rules.js';
import { derivePaymentStatus, type DepositFacts, type PaymentFacts } from '../../../server/modules/payments/payment-status.rules.js';

// ---------------------------------------------------------------------------
// Payment status. A transition is legal when some sequence of events the
// contract allows produces it (deposits can only be created as
// COMPLIANCE_REVIEW, UNCONFIRMED, CONFIRMED, BLOCKED or UNPROCESSABLE).
// ---------------------------------------------------------------------------
const EXPECTED_PAYMENT: Record<PaymentStatus, PaymentStatus[]> = {
  // Fiat-priced, no address yet: the currency is chosen, or the payment expires first.
  NEW: ['PENDING', 'EXPIRED'],
  // Address assigned, nothing seen. A first deposit may be unconfirmed/in review (AWAITING), arrive
  // already confirmed (DEPOSITED/OVERPAID), be blocked, or be unprocessable; or nothing comes (EXPIRED).
  // Not FAILED: "every deposit failed on chain" needs a deposit that was seen first (→ AWAITING),
  // since no deposit is ever created FAILED.
  PENDING: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE'],
  // A deposit has been seen: never back to PENDING ("waiting for a deposit").
  AWAITING: ['DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE', 'FAILED'],
  // Covered. A deposit seen before the payment was covered may still confirm (→ OVERPAID under
  // PROCESS) or be blocked by compliance (BLOCKED wins).
  DEPOSITED: ['OVERPAID', 'BLOCKED'],
  OVERPAID: ['BLOCKED'],
  // Terminal.
  EXPIRED: [],
  BLOCKED: [],
  // Open: a correct deposit may still arrive. Not FAILED: an UNPROCESSABLE deposit is final, so
  // "every deposit failed on chain" can never become true again.
  UNPROCESSABLE: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED'],
  // Open: a new deposit may arrive (seen, confirmed, blocked or unprocessable); or it expires.
  FAILED: ['AWAITING', 'DEPOSITED', 'OVERPAID', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE'],
};

// Deposits. `null` is "not created yet".
const EXPECTED_DEPOSIT: Record<DepositStatus | 'null', DepositStatus[]> = {
  // Screening first (review/blocked), then currency (unprocessable), then the chain (unconfirmed/confirmed).
  // A transfer already dropped when first seen is not recorded at all: never created FAILED.
  null: ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE'],
  // Approved (→ unconfirmed, confirmed, or unprocessable for a wrong currency), rejected (→ blocked),
  // or dropped by the chain while waiting (→ failed).
  COMPLIANCE_REVIEW: ['UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE', 'FAILED'],
  UNCONFIRMED: ['CONFIRMED', 'FAILED'],
  CONFIRMED: [],
  BLOCKED: [],
  UNPROCESSABLE: [],
  FAILED: [],
};

// Refunds: created PENDING (sent later) or NON_REFUNDABLE (not above the fee, or illicit); PENDING → CONFIRMED.
const REFUND_STATUSES_ALL: RefundStatus[] = ['PENDING', 'CONFIRMED', 'NON_REFUNDABLE'];
const EXPECTED_REFUND: Record<RefundStatus | 'null', RefundStatus[]> = {
  null: ['PENDING', 'NON_REFUNDABLE'],
  PENDING: ['CONFIRMED'],
  CONFIRMED: [],
  NON_REFUNDABLE: [],
};

describe('payment transitions (canTransition), every row over all 9 × 9 pairs', () => {
  it('the table covers exactly the 9 payment statuses', () => {
    expect(Object.keys(EXPECTED_PAYMENT).sort()).toEqual([...PAYMENT_STATUSES].sort());
  });
  for (const from of PAYMENT_STATUSES) {
    it(`${from} → ${EXPECTED_PAYMENT[from].join(', ') || '(terminal)'}`, () => {
      // Every pair of the row at once, so a failure lists all wrong targets: [to, allowed] per status.
      const actual = PAYMENT_STATUSES.map((to) => [to, canTransition(from, to)]);
      expect(actual).toEqual(PAYMENT_STATUSES.map((to) => [to, EXPECTED_PAYMENT[from].includes(to)]));
    });
  }
  it('no status moves to itself or back to NEW', () => {
    for (const s of PAYMENT_STATUSES) {
      expect(canTransition(s, s)).toBe(false);
      expect(canTransition(s, 'NEW')).toBe(false);
    }
  });
});

describe('deposit transitions (canMoveDeposit), every row over all 7 × 6 pairs', () => {
  const rows: (DepositStatus | null)[] = [null, ...DEPOSIT_STATUSES];
  for (const from of rows) {
    const key = from ?? 'null';
    it(`${from ?? '(created)'} → ${EXPECTED_DEPOSIT[key].join(', ') || '(terminal)'}`, () => {
      const actual = DEPOSIT_STATUSES.map((to) => [to, canMoveDeposit(from, to)]);
      expect(actual).toEqual(DEPOSIT_STATUSES.map((to) => [to, EXPECTED_DEPOSIT[key].includes(to)]));
    });
  }
});

describe('refund transitions (canMoveRefund), every row over all 4 × 3 pairs', () => {
  const rows: (RefundStatus | null)[] = [null, ...REFUND_STATUSES_ALL];
  for (const from of rows) {
    const key = from ?? 'null';
    it(`${from ?? '(created)'} → ${EXPECTED_REFUND[key].join(', ') || '(terminal)'}`, () => {
      const actual = REFUND_STATUSES_ALL.map((to) => [to, canMoveRefund(from, to)]);
      expect(actual).toEqual(REFUND_STATUSES_ALL.map((to) => [to, EXPECTED_REFUND[key].includes(to)]));
    });
  }
});

// ---------------------------------------------------------------------------
// derivePaymentStatus with hand-built facts.
// ---------------------------------------------------------------------------
const NOW = new Date('2026-01-15T12:00:00.000Z');
const LATER = new Date(NOW.getTime() + 30 * 60_000);

/** A ONE_TIME, PENDING, PROCESS payment expecting 0.01, expiring in 30 minutes. */
function payment(over: Partial<PaymentFacts> = {}): PaymentFacts {
  return { type: 'ONE_TIME', status: 'PENDING', overpaymentPolicy: 'PROCESS', expiresAt: LATER, expected: new Dec('0.01'), ...over };
}
/** A confirmed, credited deposit covering `coverage`. */
const credited = (coverage: string, over: Partial<DepositFacts> = {}): DepositFacts => ({
  status: 'CONFIRMED', followUp: false, credited: true, coverage: new Dec(coverage), ...over,
});
/** A deposit in `status` that is not credited. */
const uncredited = (status: DepositStatus, over: Partial<DepositFacts> = {}): DepositFacts => ({
  status, followUp: false, credited: false, coverage: new Dec(0), ...over,
});

describe('derivePaymentStatus', () => {
  it('no deposits: PENDING stays PENDING, NEW stays NEW', () => {
    expect(derivePaymentStatus(payment(), [], NOW)).toBe('PENDING');
    expect(derivePaymentStatus(payment({ status: 'NEW', expected: null }), [], NOW)).toBe('NEW');
  });

  it('exact: credited 0.01 of 0.01 → DEPOSITED', () => {
    expect(derivePaymentStatus(payment(), [credited('0.01')], NOW)).toBe('DEPOSITED');
    // two deposits summing exactly: 0.004 + 0.006 = 0.01
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [credited('0.004'), credited('0.006')], NOW)).toBe('DEPOSITED');
  });

  it('under: credited 0.004 of 0.01 before expiry → AWAITING', () => {
    expect(derivePaymentStatus(payment(), [credited('0.004')], NOW)).toBe('AWAITING');
    // 0.00999999 is still short of 0.01
    expect(derivePaymentStatus(payment(), [credited('0.00999999')], NOW)).toBe('AWAITING');
  });

  it('over with PROCESS: credited 0.012 of 0.01 → OVERPAID', () => {
    expect(derivePaymentStatus(payment(), [credited('0.012')], NOW)).toBe('OVERPAID');
    expect(derivePaymentStatus(payment(), [credited('0.01'), credited('0.00000001')], NOW)).toBe('OVERPAID');
  });

  it('over with EXCESS_REFUND → DEPOSITED (the excess is refunded)', () => {
    expect(derivePaymentStatus(payment({ overpaymentPolicy: 'EXCESS_REFUND' }), [credited('0.012')], NOW)).toBe('DEPOSITED');
  });

  it('a pending deposit (unconfirmed or in compliance review) → AWAITING', () => {
    expect(derivePaymentStatus(payment(), [uncredited('UNCONFIRMED')], NOW)).toBe('AWAITING');
    expect(derivePaymentStatus(payment(), [uncredited('COMPLIANCE_REVIEW')], NOW)).toBe('AWAITING');
    // a pending deposit beside a short credited one
    expect(derivePaymentStatus(payment(), [credited('0.004'), uncredited('UNCONFIRMED')], NOW)).toBe('AWAITING');
  });

  it('expiry without pending deposits → EXPIRED (from PENDING, with a short credit, at the exact instant)', () => {
    const after = new Date(LATER.getTime() + 1);
    expect(derivePaymentStatus(payment(), [], after)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [credited('0.004')], after)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment(), [], LATER)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment(), [], new Date(LATER.getTime() - 1))).toBe('PENDING');
    expect(derivePaymentStatus(payment({ status: 'UNPROCESSABLE' }), [uncredited('UNPROCESSABLE')], after)).toBe('EXPIRED');
  });

  it('expiry with a pending deposit → stays AWAITING until it resolves', () => {
    const after = new Date(LATER.getTime() + 60_000);
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [uncredited('UNCONFIRMED')], after)).toBe('AWAITING');
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [credited('0.004'), uncredited('COMPLIANCE_REVIEW')], after)).toBe('AWAITING');
  });

  it('a covering deposit confirmed after expiry still makes it DEPOSITED', () => {
    const after = new Date(LATER.getTime() + 60_000);
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [credited('0.01')], after)).toBe('DEPOSITED');
  });

  it('every deposit FAILED → FAILED', () => {
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [uncredited('FAILED')], NOW)).toBe('FAILED');
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [uncredited('FAILED'), uncredited('FAILED')], NOW)).toBe('FAILED');
  });

  it('FAILED and UNPROCESSABLE deposits only → UNPROCESSABLE; all UNPROCESSABLE → UNPROCESSABLE', () => {
    expect(derivePaymentStatus(payment({ status: 'FAILED' }), [uncredited('FAILED'), uncredited('UNPROCESSABLE')], NOW)).toBe('UNPROCESSABLE');
    expect(derivePaymentStatus(payment(), [uncredited('UNPROCESSABLE')], NOW)).toBe('UNPROCESSABLE');
  });

  it('a correct deposit after an unprocessable one decides the status', () => {
    expect(derivePaymentStatus(payment({ status: 'UNPROCESSABLE' }), [uncredited('UNPROCESSABLE'), uncredited('UNCONFIRMED')], NOW)).toBe('AWAITING');
    expect(derivePaymentStatus(payment({ status: 'UNPROCESSABLE' }), [uncredited('UNPROCESSABLE'), credited('0.01')], NOW)).toBe('DEPOSITED');
  });

  it('a BLOCKED deposit wins over everything else', () => {
    expect(derivePaymentStatus(payment(), [uncredited('BLOCKED')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment(), [credited('0.01'), uncredited('BLOCKED')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [credited('0.01'), uncredited('BLOCKED')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [uncredited('UNCONFIRMED'), uncredited('BLOCKED')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment(), [uncredited('BLOCKED')], new Date(LATER.getTime() + 1))).toBe('BLOCKED');
  });

  it('follow-up deposits are ignored (credited, refunded, or blocked)', () => {
    const deposited = payment({ status: 'DEPOSITED' });
    // a credited follow-up of 0.005 on a covered 0.01 payment does not make it OVERPAID
    expect(derivePaymentStatus(deposited, [credited('0.01'), credited('0.005', { followUp: true })], NOW)).toBe('DEPOSITED');
    // a blocked follow-up does not block the payment
    expect(derivePaymentStatus(deposited, [credited('0.01'), uncredited('BLOCKED', { followUp: true })], NOW)).toBe('DEPOSITED');
    // an unconfirmed follow-up does not make it AWAITING
    expect(derivePaymentStatus(deposited, [credited('0.01'), uncredited('UNCONFIRMED', { followUp: true })], NOW)).toBe('DEPOSITED');
    // follow-ups only: the payment has no relevant deposit at all
    expect(derivePaymentStatus(payment(), [credited('0.01', { followUp: true })], NOW)).toBe('PENDING');
  });

  it('REUSABLE: one credited deposit, however small → DEPOSITED; never expires, never OVERPAID', () => {
    const reusable = payment({ type: 'REUSABLE', expiresAt: null });
    expect(derivePaymentStatus(reusable, [credited('0.001')], NOW)).toBe('DEPOSITED');
    expect(derivePaymentStatus(reusable, [credited('0.01'), credited('0.02')], NOW)).toBe('DEPOSITED');
    expect(derivePaymentStatus(reusable, [], new Date('2030-01-01T00:00:00Z'))).toBe('PENDING');
    expect(derivePaymentStatus(reusable, [uncredited('UNCONFIRMED')], NOW)).toBe('AWAITING');
  });

  it('DEPOSITED and OVERPAID stay when nothing new covers or blocks them', () => {
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [credited('0.01')], new Date(LATER.getTime() + 1))).toBe('DEPOSITED');
    expect(derivePaymentStatus(payment({ status: 'OVERPAID' }), [credited('0.012')], NOW)).toBe('OVERPAID');
  });

  it('terminal EXPIRED and BLOCKED stay whatever the deposits say', () => {
    expect(derivePaymentStatus(payment({ status: 'EXPIRED' }), [credited('0.01')], NOW)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment({ status: 'EXPIRED' }), [uncredited('UNCONFIRMED')], NOW)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment({ status: 'BLOCKED' }), [credited('0.012')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment({ status: 'BLOCKED' }), [], NOW)).toBe('BLOCKED');
  });
});
