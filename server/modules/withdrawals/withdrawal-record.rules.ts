/**
 * The withdrawal record returned by POST/GET /v1/withdrawals (CONTRACT §6),
 * with the screening result of the destination (`addressOwner`,
 * `sourceRiskEntities`, `destinationRiskEntities`, 2021-11-08). Pure.
 */
import type { withdrawals } from '../../../db/schema.js';
import type { RiskAssessment } from '../compliance/index.js';
import type { CryptoCurrency, FiatCurrency } from '../money/index.js';
import { formatAmount } from '../money/index.js';
import { unixSeconds } from '../payments/index.js';

export type WithdrawalRow = typeof withdrawals.$inferSelect;
export type WithdrawalRecord = Record<string, unknown> & { withdrawalId: string; status: string };

export function toWithdrawalRecord(w: WithdrawalRow, approvals: number): WithdrawalRecord {
  const currency = w.withdrawCurrency as CryptoCurrency;
  const assessment = w.riskAssessment as unknown as RiskAssessment;
  return {
    withdrawalId: w.id,
    clientWithdrawalId: w.clientWithdrawalId,
    businessId: w.businessId,
    status: w.status,
    withdrawCurrency: w.withdrawCurrency,
    network: w.network,
    address: w.address,
    destinationTag: w.destinationTag,
    displayCurrency: w.displayCurrency,
    expectedDisplayAmount: formatAmount(w.expectedDisplayAmount, w.displayCurrency as FiatCurrency),
    estimatedWithdrawAmount: formatAmount(w.estimatedWithdrawAmount, currency),
    settlementCurrency: w.settlementCurrency,
    deductedSettlementAmount: formatAmount(w.deductedSettlementAmount, w.settlementCurrency as FiatCurrency),
    withdrawFee: formatAmount(w.withdrawFee, currency),
    feePayer: w.feePayer,
    approvalsRequired: w.approvalsRequired,
    approvals,
    riskScore: w.riskScore,
    addressOwner: assessment.addressOwner,
    sourceRiskEntities: assessment.sourceRiskEntities,
    destinationRiskEntities: assessment.destinationRiskEntities,
    transactionId: w.transactionId,
    ...(w.actuals ?? {}),
    createdAt: unixSeconds(w.createdAt),
    completedAt: w.completedAt ? unixSeconds(w.completedAt) : null,
  };
}
