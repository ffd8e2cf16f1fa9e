/**
 * What a payment's status should be, given its deposits (CONTRACT §5). Pure:
 * the deposit service recomputes it after every change and moves the payment
 * through `transitionPayment` when it differs (and the table allows it).
 */
import type { DepositStatus, PaymentStatus } from '../money/index.js';
import { Dec } from '../money/index.js';

export type PaymentFacts = {
  type: string;
  status: PaymentStatus;
  overpaymentPolicy: string;
  expiresAt: Date | null;
  /** What must be covered, in the unit deposits are compared in (see `coverageUnit`). */
  expected: Dec | null;
};

export type DepositFacts = {
  status: DepositStatus;
  followUp: boolean;
  credited: boolean;
  /** The credited part, in the payment's comparison unit. */
  coverage: Dec;
  /** Was credited, then reorganised off the chain for good: its credit was reversed (CONTRACT §10). */
  creditReversed?: boolean;
};

/** A deposit not final yet: the payment waits for it (and so does its expiry). */
export const PENDING_DEPOSIT: readonly DepositStatus[] = ['UNCONFIRMED', 'COMPLIANCE_REVIEW'];

/**
 * FLOATING payments priced in fiat are covered when the fiat value of their
 * deposits (at the rate when each was received) reaches the price; all
 * others when the crypto amount reaches `expectedDepositAmount`.
 */
export function coverageUnit(payment: { rateType: string; pricedIn: string }): 'DISPLAY' | 'DEPOSIT' {
  return payment.rateType === 'FLOATING' && payment.pricedIn === 'FIAT' ? 'DISPLAY' : 'DEPOSIT';
}

export function derivePaymentStatus(payment: PaymentFacts, deposits: readonly DepositFacts[], now: Date): PaymentStatus {
  if (payment.status === 'EXPIRED' || payment.status === 'BLOCKED') return payment.status;
  const relevant = deposits.filter((d) => !d.followUp);
  if (relevant.some((d) => d.status === 'BLOCKED')) return 'BLOCKED';

  const credited = relevant.filter((d) => d.credited);
  if (payment.type === 'REUSABLE') {
    if (credited.length > 0) return 'DEPOSITED';
  } else if (payment.expected && credited.length > 0) {
    const covered = credited.reduce((sum, d) => sum.add(d.coverage), new Dec(0));
    if (covered.gt(payment.expected)) return payment.overpaymentPolicy === 'PROCESS' ? 'OVERPAID' : 'DEPOSITED';
    if (covered.eq(payment.expected)) return 'DEPOSITED';
  }
  if (payment.status !== 'DEPOSITED' && payment.status !== 'OVERPAID') return openStatus(payment, relevant, now);
  // Covered stays covered, unless the chain took back a credit that covered it: then the payment is
  // open again (new deposits count towards it, not as follow-ups) and the merchant hears so, as
  // FAILED when every deposit failed on chain and AWAITING otherwise. Past its expiry, AWAITING too:
  // straight from covered to EXPIRED would make every covered payment one the expiry sweep must
  // look at; the sweep's next pass expires it.
  if (!relevant.some((d) => d.creditReversed)) return payment.status;
  return openStatus(payment, relevant, now) === 'FAILED' ? 'FAILED' : 'AWAITING';
}

/** The status of a payment not covered (nor blocked) by its relevant deposits. */
function openStatus(payment: PaymentFacts, relevant: readonly DepositFacts[], now: Date): PaymentStatus {
  if (relevant.some((d) => PENDING_DEPOSIT.includes(d.status))) return 'AWAITING';
  if (payment.type === 'ONE_TIME' && payment.expiresAt && now >= payment.expiresAt) return 'EXPIRED';
  if (relevant.some((d) => d.credited)) return 'AWAITING';
  if (relevant.length > 0 && relevant.every((d) => d.status === 'FAILED')) return 'FAILED';
  if (relevant.length > 0 && relevant.every((d) => d.status === 'FAILED' || d.status === 'UNPROCESSABLE')) return 'UNPROCESSABLE';
  return payment.status === 'NEW' ? 'NEW' : 'PENDING';
}
