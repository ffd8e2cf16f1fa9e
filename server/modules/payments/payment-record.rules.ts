/**
 * The payment record of the API (`DetailedPaymentResponse`, spec §2.4),
 * built by one pure function from the stored row. Required fields are
 * always present; optional ones are omitted rather than null when unknown.
 */
import type { payments } from '../../../db/schema.js';
import type { CryptoCurrency, FiatCurrency } from '../money/index.js';
import { formatAmount } from '../money/index.js';

export type PaymentRow = typeof payments.$inferSelect;

export type DepositRecord = Record<string, unknown>;

export type PaymentRecord = {
  paymentId: string;
  clientPaymentId: string;
  businessId: string;
  locale: string;
  status: string;
  rateType: string;
  type: string;
  url: string;
  overpaymentPolicy: string;
  refundFollowUpDepositsForOneTimePayments: boolean;
  processorType: 'BLOCKCHAIN';
  walletAddress?: string;
  destinationTag?: string;
  displayCurrency?: string;
  expectedDisplayAmount?: string;
  expectedDisplayDistributedUserServiceFee?: string;
  actualDisplayAmount: string;
  actualDisplayDistributedUserServiceFee: string;
  depositCurrency?: string;
  expectedNetwork?: string;
  expectedDepositAmount?: string;
  expectedDepositDistributedUserServiceFee?: string;
  actualDepositAmount: string;
  actualDepositDistributedUserServiceFee: string;
  expectedUniformAmount?: string;
  actualUniformAmount: string;
  userServiceFeeDistributionPercentage: string;
  redirectUrl?: string;
  redirectMode: string;
  expirationMinutes: number;
  initiatedBy: string;
  paymentInitiatedAt: number;
  paymentRequestedAt?: number;
  deposits: DepositRecord[];
};

/** Sums over credited deposits; zero until the deposits issue credits any. */
export type PaymentActuals = {
  depositAmount: string;
  depositDistributedUserServiceFee: string;
  displayAmount: string;
  displayDistributedUserServiceFee: string;
  uniformAmount: string;
};

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** Percentages print without trailing zeros: "50", "12.5". */
export const percent = (value: string) => (value.includes('.') ? value.replace(/\.?0+$/, '') : value);

export function checkoutUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/checkout/${token}`;
}

export function toPaymentRecord(
  row: PaymentRow,
  publicUrl: string,
  deposits: DepositRecord[] = [],
  actuals?: PaymentActuals,
): PaymentRecord {
  const display = row.displayCurrency as FiatCurrency | null;
  const crypto = row.depositCurrency as CryptoCurrency | null;
  const zeroDisplay = display ? formatAmount('0', display) : '0';
  const zeroCrypto = crypto ? formatAmount('0', crypto) : '0';
  const record: PaymentRecord = {
    paymentId: row.id,
    clientPaymentId: row.clientPaymentId,
    businessId: row.businessId,
    locale: row.locale,
    status: row.status,
    rateType: row.rateType,
    type: row.type,
    url: checkoutUrl(publicUrl, row.checkoutToken),
    overpaymentPolicy: row.overpaymentPolicy,
    refundFollowUpDepositsForOneTimePayments: row.refundFollowUpDeposits,
    processorType: 'BLOCKCHAIN',
    actualDisplayAmount: actuals?.displayAmount ?? zeroDisplay,
    actualDisplayDistributedUserServiceFee: actuals?.displayDistributedUserServiceFee ?? zeroDisplay,
    actualDepositAmount: actuals?.depositAmount ?? zeroCrypto,
    actualDepositDistributedUserServiceFee: actuals?.depositDistributedUserServiceFee ?? zeroCrypto,
    actualUniformAmount: actuals?.uniformAmount ?? formatAmount('0', 'EUR'),
    userServiceFeeDistributionPercentage: percent(row.userFeeSharePercent),
    redirectMode: row.redirectMode,
    expirationMinutes: row.expirationMinutes,
    initiatedBy: row.initiatedBy,
    paymentInitiatedAt: unixSeconds(row.initiatedAt),
    deposits,
  };
  if (row.walletAddress) record.walletAddress = row.walletAddress;
  if (row.destinationTag) record.destinationTag = row.destinationTag;
  if (display) {
    record.displayCurrency = display;
    if (row.expectedDisplayAmount) record.expectedDisplayAmount = formatAmount(row.expectedDisplayAmount, display);
    if (row.expectedDisplayFee) record.expectedDisplayDistributedUserServiceFee = formatAmount(row.expectedDisplayFee, display);
  }
  if (crypto) {
    record.depositCurrency = crypto;
    if (row.expectedDepositAmount) record.expectedDepositAmount = formatAmount(row.expectedDepositAmount, crypto, 'UP');
    if (row.expectedDepositFee) record.expectedDepositDistributedUserServiceFee = formatAmount(row.expectedDepositFee, crypto);
  }
  if (row.network) record.expectedNetwork = row.network;
  if (row.expectedUniformAmount) record.expectedUniformAmount = formatAmount(row.expectedUniformAmount, 'EUR');
  if (row.redirectUrl) record.redirectUrl = row.redirectUrl;
  if (row.requestedAt) record.paymentRequestedAt = unixSeconds(row.requestedAt);
  return record;
}
