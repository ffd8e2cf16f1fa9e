/**
 * The withdrawal callback body (spec §6.2, CONTRACT §6), built by one pure
 * function from the withdrawal, following the per-status table:
 * COMPLETED carries everything; FAILED omits actual amounts, fees and
 * transactionId; BLOCKED carries them as null (with the two extra null keys
 * of the BLOCKED sample). Amounts are decimal strings.
 */
import type { LegalEntity } from '../compliance/index.js';

export type CallbackStatus = 'COMPLETED' | 'FAILED' | 'BLOCKED';

/** What a COMPLETED withdrawal's callback adds to the common fields: its actual amounts and fees. */
export const ACTUAL_FIELDS = [
  'actualDisplayAmount',
  'actualWithdrawAmount',
  'deductedSettlementAmount',
  'withdrawFee',
  'displayFee',
  'displayRateDepegLossAmount',
  'settlementRateDepegLossAmount',
] as const;

/** The BLOCKED sample carries the actual fields as null, two null keys of its own, and a null transactionId. */
const BLOCKED_NULL_FIELDS = [...ACTUAL_FIELDS, 'settlementServiceFee', 'settlementMerchantTransactionFee', 'transactionId'] as const;

export type WithdrawalForCallback = {
  withdrawalId: string;
  clientWithdrawalId: string;
  businessId: string;
  displayCurrency: string;
  withdrawCurrency: string;
  settlementCurrency: string;
  expectedDisplayAmount: string;
  estimatedWithdrawAmount: string;
  address: string;
  destinationTag: string | null;
  txAddressOwner: LegalEntity;
  /** Present once COMPLETED. */
  actuals?: Record<(typeof ACTUAL_FIELDS)[number], string>;
  transactionId?: string | null;
};

/** For destination-tag networks the tag follows the address in the same string: `r…?dt=123`. */
export function toTxAddress(address: string, tag: string | null): string {
  return tag ? `${address}?dt=${tag}` : address;
}

export function withdrawalCallbackBody(status: CallbackStatus, w: WithdrawalForCallback): Record<string, unknown> {
  const base: Record<string, unknown> = {
    status,
    clientWithdrawalId: w.clientWithdrawalId,
    businessId: w.businessId,
    withdrawalId: w.withdrawalId,
    displayCurrency: w.displayCurrency,
    withdrawCurrency: w.withdrawCurrency,
    settlementCurrency: w.settlementCurrency,
    expectedDisplayAmount: w.expectedDisplayAmount,
    estimatedWithdrawAmount: w.estimatedWithdrawAmount,
    toTxAddress: toTxAddress(w.address, w.destinationTag),
    txAddressOwner: { name: w.txAddressOwner.name, category: w.txAddressOwner.category },
  };
  if (status === 'FAILED') return base;
  if (status === 'BLOCKED') return { ...base, ...Object.fromEntries(BLOCKED_NULL_FIELDS.map((field) => [field, null])) };
  if (!w.actuals || !w.transactionId) throw new Error(`withdrawal ${w.withdrawalId} is COMPLETED without actuals`);
  return { ...base, ...w.actuals, transactionId: w.transactionId };
}
