/**
 * The payment, deposit and refund state machines (CONTRACT §5) and the rule
 * that derives a payment's status from its deposits.
 *
 * The expected moves below are written out by hand from the events CONTRACT §5
 * describes (what can happen to a payment, a deposit, a refund, and which
 * statuses it can happen in) — never copied from, or computed with, the
 * code's own tables. Every (from, to) pair over all states is checked: a
 * pair is legal exactly when some event below makes it.
 */
import { describe, expect, it } from 'vitest';
import { DEPOSIT_STATUSES, PAYMENT_STATUSES, type DepositStatus, type PaymentStatus } from '../../../server/modules/money/catalog.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import { canMoveDeposit, canMoveRefund, type RefundStatus } from '../../../server/modules/deposits/deposit-states.rules.js';
import { canTransition } from '../../../server/modules/payments/payment-states.rules.js';
import { derivePaymentStatus, type DepositFacts, type PaymentFacts } from '../../../server/modules/payments/payment-status.rules.js';

type Move<S> = readonly [from: S | null, to: S];

/** The moves one event makes: from each of `from` (null: creation) to each of `to`; `event` says why. */
function when<S extends string>(event: string, from: readonly (S | null)[], to: readonly S[]): Move<S>[] {
  expect(event).not.toBe('');
  return from.flatMap((f) => to.map((t): Move<S> => [f, t]));
}

/** Whether `moves` holds (from, to). */
const holds = <S extends string>(moves: readonly Move<S>[], from: S | null, to: S) => moves.some(([f, t]) => f === from && t === to);

// ---------------------------------------------------------------------------
// Payment status. A move is legal when some event the contract allows
// produces it (deposits can only be created as COMPLIANCE_REVIEW,
// UNCONFIRMED, CONFIRMED, BLOCKED or UNPROCESSABLE). Never to itself, never
// back to NEW, nothing out of EXPIRED or BLOCKED.
// ---------------------------------------------------------------------------
const OPEN_WITH_ADDRESS: PaymentStatus[] = ['PENDING', 'AWAITING', 'UNPROCESSABLE', 'FAILED'];
const LEGAL_PAYMENT: Move<PaymentStatus>[] = [
  ...when('the customer chooses a currency: the payment gets its address', ['NEW'], ['PENDING']),
  ...when('the time runs out before the payment is covered', ['NEW', ...OPEN_WITH_ADDRESS], ['EXPIRED']),
  // Not from AWAITING: once a deposit is seen the payment never goes back to waiting for one (PENDING),
  // and AWAITING is already "seen, not final".
  ...when('a deposit is seen, unconfirmed or held in review', ['PENDING', 'UNPROCESSABLE', 'FAILED'], ['AWAITING']),
  ...when('confirmed deposits cover the payment', OPEN_WITH_ADDRESS, ['DEPOSITED']),
  // A deposit seen before the payment was covered may still confirm on a covered one (PROCESS policy).
  ...when('confirmed deposits exceed the payment', [...OPEN_WITH_ADDRESS, 'DEPOSITED'], ['OVERPAID']),
  ...when('compliance blocks a deposit: BLOCKED wins over everything open or covered', [...OPEN_WITH_ADDRESS, 'DEPOSITED', 'OVERPAID'], ['BLOCKED']),
  // Not from UNPROCESSABLE itself; an UNPROCESSABLE deposit never becomes FAILED (at most BLOCKED), so the payment never becomes FAILED from there.
  ...when('a deposit of a currency or network the payment cannot take', ['PENDING', 'AWAITING', 'FAILED'], ['UNPROCESSABLE']),
  // Needs a deposit seen first (AWAITING): no deposit is ever created FAILED.
  ...when('every deposit seen is dropped by the chain', ['AWAITING'], ['FAILED']),
  // CONTRACT §10: a credited deposit reorganised away gets a reversing entry; the payment is no longer covered.
  ...when('the chain takes back a credit that covered it: what is left is short, or a deposit is in flight', ['DEPOSITED', 'OVERPAID'], ['AWAITING']),
  ...when('the chain takes back a credit that covered it: every deposit has now failed on chain', ['DEPOSITED', 'OVERPAID'], ['FAILED']),
  ...when('the chain takes back one of the credits that overpaid it: the rest cover it exactly', ['OVERPAID'], ['DEPOSITED']),
];

// Deposits. `null` is "not created yet": a transfer already dropped when first seen is not recorded.
const LEGAL_DEPOSIT: Move<DepositStatus>[] = [
  // Screening first (review, blocked), then currency (unprocessable), then the chain (unconfirmed, confirmed).
  ...when('a transfer to a payment address is reported', [null], ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE']),
  ...when('an operator approves it', ['COMPLIANCE_REVIEW'], ['UNCONFIRMED', 'CONFIRMED', 'UNPROCESSABLE']),
  ...when('an operator rejects it', ['COMPLIANCE_REVIEW'], ['BLOCKED']),
  ...when('the chain confirms it', ['UNCONFIRMED'], ['CONFIRMED']),
  ...when('the chain drops it while it waits', ['COMPLIANCE_REVIEW', 'UNCONFIRMED'], ['FAILED']),
  ...when('a reorganisation takes it off the chain for good after it confirmed', ['CONFIRMED'], ['FAILED']),
  ...when('it is mined again after it failed on chain: judged again as when first seen', ['FAILED'], ['COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE']),
  ...when('it is mined again after it was dropped, its sender now listed', ['UNPROCESSABLE'], ['BLOCKED']),
];

// Refunds: created PENDING (sent once the deposit confirms) or NON_REFUNDABLE (not above the fee, or illicit); sent, it confirms.
const REFUND_STATUSES_ALL: RefundStatus[] = ['PENDING', 'CONFIRMED', 'NON_REFUNDABLE'];
const LEGAL_REFUND: Move<RefundStatus>[] = [
  ...when('a deposit is refunded', [null], ['PENDING', 'NON_REFUNDABLE']),
  ...when('the refund transaction confirms', ['PENDING'], ['CONFIRMED']),
  ...when('its deposit leaves the chain before the broadcast job claimed the refund', ['PENDING'], ['NON_REFUNDABLE']),
  ...when('that deposit is back on the chain: the cancelled refund is sent after all', ['NON_REFUNDABLE'], ['PENDING']),
];

/** The targets of `from` among `states`, as the test's name shows them. */
const targets = <S extends string>(moves: readonly Move<S>[], from: S | null, states: readonly S[]) =>
  states.filter((to) => holds(moves, from, to)).join(', ') || '(terminal)';

describe('payment transitions (canTransition), every row over all 9 × 9 pairs', () => {
  it('the moves name only the 9 payment statuses, and reach each but NEW', () => {
    for (const s of LEGAL_PAYMENT.flat()) expect(PAYMENT_STATUSES).toContain(s);
    expect(PAYMENT_STATUSES.filter((s) => !LEGAL_PAYMENT.some(([, to]) => to === s))).toEqual(['NEW']);
  });
  for (const from of PAYMENT_STATUSES) {
    it(`${from} → ${targets(LEGAL_PAYMENT, from, PAYMENT_STATUSES)}`, () => {
      // Every pair of the row at once, so a failure lists all wrong targets: [to, allowed] per status.
      const actual = PAYMENT_STATUSES.map((to) => [to, canTransition(from, to)]);
      expect(actual).toEqual(PAYMENT_STATUSES.map((to) => [to, holds(LEGAL_PAYMENT, from, to)]));
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
  for (const from of [null, ...DEPOSIT_STATUSES]) {
    it(`${from ?? '(created)'} → ${targets(LEGAL_DEPOSIT, from, DEPOSIT_STATUSES)}`, () => {
      const actual = DEPOSIT_STATUSES.map((to) => [to, canMoveDeposit(from, to)]);
      expect(actual).toEqual(DEPOSIT_STATUSES.map((to) => [to, holds(LEGAL_DEPOSIT, from, to)]));
    });
  }
});

describe('refund transitions (canMoveRefund), every row over all 4 × 3 pairs', () => {
  for (const from of [null, ...REFUND_STATUSES_ALL]) {
    it(`${from ?? '(created)'} → ${targets(LEGAL_REFUND, from, REFUND_STATUSES_ALL)}`, () => {
      const actual = REFUND_STATUSES_ALL.map((to) => [to, canMoveRefund(from, to)]);
      expect(actual).toEqual(REFUND_STATUSES_ALL.map((to) => [to, holds(LEGAL_REFUND, from, to)]));
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

  it('a credit the chain took back opens a covered payment again (CONTRACT §10)', () => {
    const reversed = uncredited('FAILED', { creditReversed: true });
    // the only deposit: every deposit failed on chain
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [reversed], NOW)).toBe('FAILED');
    // a short credit is left, or a deposit is still in flight
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [reversed, credited('0.004')], NOW)).toBe('AWAITING');
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [reversed, uncredited('UNCONFIRMED')], NOW)).toBe('AWAITING');
    // what is left still covers it: nothing moves, or OVERPAID comes down to DEPOSITED
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [reversed, credited('0.01')], NOW)).toBe('DEPOSITED');
    expect(derivePaymentStatus(payment({ status: 'OVERPAID' }), [reversed, credited('0.01')], NOW)).toBe('DEPOSITED');
    expect(derivePaymentStatus(payment({ status: 'OVERPAID' }), [reversed, credited('0.011')], NOW)).toBe('OVERPAID');
    // past its expiry: AWAITING (never covered → EXPIRED in one step), which the expiry sweep then expires
    const after = new Date(LATER.getTime() + 1);
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [reversed, credited('0.004')], after)).toBe('AWAITING');
    expect(derivePaymentStatus(payment({ status: 'AWAITING' }), [reversed, credited('0.004')], after)).toBe('EXPIRED');
    // REUSABLE: nothing credited is left
    expect(derivePaymentStatus(payment({ type: 'REUSABLE', expiresAt: null, status: 'DEPOSITED' }), [reversed], NOW)).toBe('FAILED');
    // beside an unprocessable deposit nothing is left either, yet not every deposit failed on chain: AWAITING
    // (never UNPROCESSABLE or PENDING, which a covered payment cannot move to)
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [uncredited('UNPROCESSABLE'), reversed], NOW)).toBe('AWAITING');
    expect(derivePaymentStatus(payment({ type: 'REUSABLE', expiresAt: null, status: 'DEPOSITED' }), [uncredited('UNPROCESSABLE'), reversed], NOW)).toBe('AWAITING');
    // a reversed follow-up does not move the payment; terminal statuses stay
    expect(derivePaymentStatus(payment({ status: 'DEPOSITED' }), [credited('0.01'), uncredited('FAILED', { followUp: true, creditReversed: true })], NOW)).toBe('DEPOSITED');
    expect(derivePaymentStatus(payment({ status: 'EXPIRED' }), [reversed], NOW)).toBe('EXPIRED');
  });

  it('terminal EXPIRED and BLOCKED stay whatever the deposits say', () => {
    expect(derivePaymentStatus(payment({ status: 'EXPIRED' }), [credited('0.01')], NOW)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment({ status: 'EXPIRED' }), [uncredited('UNCONFIRMED')], NOW)).toBe('EXPIRED');
    expect(derivePaymentStatus(payment({ status: 'BLOCKED' }), [credited('0.012')], NOW)).toBe('BLOCKED');
    expect(derivePaymentStatus(payment({ status: 'BLOCKED' }), [], NOW)).toBe('BLOCKED');
  });
});
