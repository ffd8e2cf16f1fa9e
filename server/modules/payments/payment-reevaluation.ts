/**
 * A payment's status is a function of its deposits (payment-status.rules.ts):
 * recomputed after every deposit change and at expiry. Reads the deposits
 * table; deposits call this through the payments index.
 */
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { deposits } from '../../../db/schema.js';
import { Dec, type DepositStatus, type PaymentStatus } from '../money/index.js';
import type { DepositRow } from './deposit-record.rules.js';
import { notifyPayment } from './live-updates.js';
import type { PaymentRow } from './payment-record.rules.js';
import { canTransition } from './payment-states.rules.js';
import { coverageUnit, derivePaymentStatus } from './payment-status.rules.js';
import { recordPaymentCredit, transitionPayment } from './payment-transition.js';
import type { PaymentsDeps } from './ports.js';

/** What the payment expects and how much a deposit covers, in the comparison unit. */
export function coverage(p: PaymentRow) {
  const unit = coverageUnit(p);
  const expected =
    unit === 'DISPLAY'
      ? p.expectedDisplayAmount ? new Dec(p.expectedDisplayAmount).add(p.expectedDisplayFee ?? 0) : null
      : p.expectedDepositAmount ? new Dec(p.expectedDepositAmount) : null;
  const of = (d: DepositRow) => (unit === 'DISPLAY' ? new Dec(d.amounts.creditedDisplayAmount ?? 0) : new Dec(d.creditedAmount));
  return { unit, expected, of };
}


/** Recompute the payment's status from its deposits and move it when the table allows. */
export async function reevaluatePayment(tx: Queryable, deps: Pick<PaymentsDeps, 'paymentSubscribers'>, p: PaymentRow, at: Date, reason: string): Promise<PaymentStatus> {
  const rows = await tx.select().from(deposits).where(eq(deposits.paymentId, p.id));
  const { expected, of } = coverage(p);
  const next = derivePaymentStatus(
    { type: p.type, status: p.status as PaymentStatus, overpaymentPolicy: p.overpaymentPolicy, expiresAt: p.expiresAt, expected },
    rows.map((d) => ({
      status: d.status as DepositStatus,
      followUp: d.followUp,
      credited: d.credited,
      coverage: of(d),
      // credited again since (back on the chain): not a reversed credit any more
      creditReversed: d.creditReversedAt !== null && !d.credited,
    })),
    at,
  );
  if (next !== p.status && canTransition(p.status as PaymentStatus, next)) {
    await transitionPayment(tx, deps, p, next, reason, at);
  } else if (rows.some((d) => d.credited && d.status === 'CONFIRMED' && d.confirmedAt?.getTime() === at.getTime())) {
    // Money credited by this change with the status unchanged: the merchant hears of it too (a callback).
    await recordPaymentCredit(tx, deps, p, reason, at);
  } else {
    // Deposits changed even if the status did not: live checkouts still need to know.
    await notifyPayment(tx, p.id);
  }
  return p.status as PaymentStatus;
}

