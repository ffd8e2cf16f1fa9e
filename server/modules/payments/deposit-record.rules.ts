/**
 * The deposit record (spec §2.5) with its refund (§2.7), built by pure
 * functions from stored rows; and the payment's actual amounts, summed over
 * credited deposits.
 */
import type { deposits, refunds } from '../../../db/schema.js';
import { Dec, formatAnyAmount } from '../money/index.js';
import { percent, unixSeconds, type PaymentActuals } from './payment-record.rules.js';

/** Keys of `valueDeposit` that are fields of the deposit record. */
export const DEPOSIT_AMOUNT_FIELDS = [
  'depositAmount', 'depositDistributedUserServiceFee', 'displayAmount', 'displayPayableAmount', 'displayServiceFee',
  'displayDistributedUserServiceFee', 'settlementPayableAmount', 'settlementServiceFee', 'settlementDistributedUserServiceFee',
  'uniformPayableAmount', 'uniformServiceFee', 'uniformDistributedUserServiceFee', 'displayRateDepegLossAmount',
  'settlementRateDepegLossAmount', 'uniformRateDepegLossAmount',
] as const;

export type DepositRow = typeof deposits.$inferSelect;
export type RefundRow = typeof refunds.$inferSelect;

export function toRefundRecord(r: RefundRow): Record<string, unknown> {
  const record: Record<string, unknown> = {
    type: r.type,
    status: r.status,
    reason: r.reason,
    depositCurrency: r.depositCurrency,
    network: r.network,
    amount: formatAnyAmount(r.amount, r.depositCurrency),
    fee: formatAnyAmount(r.fee, r.depositCurrency),
    displayCurrency: r.displayCurrency,
    displayAmount: formatAnyAmount(r.displayAmount, r.displayCurrency),
    displayFee: formatAnyAmount(r.displayFee, r.displayCurrency),
  };
  if (r.transactionId) record.transactionId = r.transactionId;
  if (r.confirmedAt) record.confirmedAt = unixSeconds(r.confirmedAt);
  return record;
}

export function toDepositRecord(d: DepositRow, refund: RefundRow | undefined, userFeeSharePercent: string): Record<string, unknown> {
  const assessment = d.riskAssessment as { addressOwner: unknown; sourceRiskEntities: unknown; destinationRiskEntities: unknown };
  const record: Record<string, unknown> = {
    id: d.id,
    transactionId: d.txHash,
    status: d.status,
    fromAddress: d.fromAddress,
    toAddress: d.toAddress,
    riskScore: d.riskScore,
    addressRiskAssessment: {
      addressOwner: assessment.addressOwner,
      sourceRiskEntities: assessment.sourceRiskEntities,
      destinationRiskEntities: assessment.destinationRiskEntities,
    },
    depositCurrency: d.depositCurrency,
    network: d.network,
    onChainFee: formatAnyAmount(d.onChainFee, d.depositCurrency),
    displayCurrency: d.displayCurrency,
    settlementCurrency: d.settlementCurrency,
    uniformCurrency: 'EUR',
    userServiceFeeDistributionPercentage: percent(userFeeSharePercent),
    depositReceivedAt: unixSeconds(d.receivedAt),
  };
  for (const field of DEPOSIT_AMOUNT_FIELDS) {
    const value = d.amounts[field];
    if (value !== undefined) record[field] = value;
  }
  if (refund) record.refund = toRefundRecord(refund);
  return record;
}

/** Sums over credited deposits, formatted in the payment's currencies. */
export function paymentActuals(
  credited: readonly DepositRow[],
  currencies: { deposit: string | null; display: string | null },
): PaymentActuals {
  const sum = (key: string) => credited.reduce((acc, d) => acc.add(d.amounts[key] ?? '0'), new Dec(0));
  const inPaymentCurrency = credited.filter((d) => d.depositCurrency === currencies.deposit);
  const deposit = currencies.deposit ?? 'EUR';
  const display = currencies.display ?? 'EUR';
  return {
    // Down, as each deposit's amount: what arrived, never more (18-decimal tokens shown with 6).
    depositAmount: formatAnyAmount(inPaymentCurrency.reduce((acc, d) => acc.add(d.creditedAmount), new Dec(0)), deposit, 'DOWN'),
    depositDistributedUserServiceFee: formatAnyAmount(
      inPaymentCurrency.reduce((acc, d) => acc.add(d.amounts.depositDistributedUserServiceFee ?? '0'), new Dec(0)),
      deposit,
    ),
    displayAmount: formatAnyAmount(sum('creditedDisplayAmount'), display),
    displayDistributedUserServiceFee: formatAnyAmount(sum('displayDistributedUserServiceFee'), display),
    uniformAmount: formatAnyAmount(sum('creditedUniformAmount'), 'EUR'),
  };
}
