/**
 * The response shapes of spec §2.3–§2.7 as zod schemas: they document the
 * API in /openapi.json and tests parse every response with them (strictly),
 * so a missing required field or a stray one fails a test.
 */
import { z } from 'zod';
import {
  CRYPTO_CURRENCIES, DEPOSIT_STATUSES, FIAT_CURRENCIES, NETWORKS, OVERPAYMENT_POLICIES, PAYMENT_STATUSES,
  PAYMENT_TYPES, RATE_TYPES, REDIRECT_MODES, REFUND_REASONS, REFUND_STATUSES, REFUND_TYPES, SETTLEMENT_CURRENCIES,
} from '../money/index.js';

const amount = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/).describe('Decimal string');
const unix = z.int().describe('UNIX seconds');

export const LegalEntitySchema = z.strictObject({ name: z.string(), category: z.string() });

export const RefundRecordSchema = z.strictObject({
  type: z.enum(REFUND_TYPES),
  status: z.enum(REFUND_STATUSES),
  reason: z.enum(REFUND_REASONS),
  depositCurrency: z.string(),
  network: z.enum(NETWORKS),
  amount,
  fee: amount.optional(),
  displayCurrency: z.enum(FIAT_CURRENCIES),
  displayAmount: amount,
  displayFee: amount.optional(),
  transactionId: z.string().optional(),
  confirmedAt: unix.optional(),
});

export const DepositRecordSchema = z.strictObject({
  id: z.uuid(),
  transactionId: z.string(),
  status: z.enum(DEPOSIT_STATUSES),
  fromAddress: z.string(),
  toAddress: z.string(),
  riskScore: amount.optional(),
  addressRiskAssessment: z
    .strictObject({
      addressOwner: LegalEntitySchema.optional(),
      sourceRiskEntities: z.array(LegalEntitySchema).optional(),
      destinationRiskEntities: z.array(LegalEntitySchema).optional(),
    })
    .optional(),
  depositCurrency: z.string(),
  network: z.enum(NETWORKS),
  depositAmount: amount.optional(),
  depositDistributedUserServiceFee: amount.optional(),
  onChainFee: amount,
  displayCurrency: z.enum(FIAT_CURRENCIES),
  displayAmount: amount.optional(),
  displayPayableAmount: amount.optional(),
  displayServiceFee: amount.optional(),
  displayDistributedUserServiceFee: amount.optional(),
  settlementCurrency: z.enum(SETTLEMENT_CURRENCIES).optional(),
  settlementPayableAmount: amount.optional(),
  settlementServiceFee: amount.optional(),
  settlementDistributedUserServiceFee: amount.optional(),
  uniformCurrency: z.literal('EUR'),
  uniformPayableAmount: amount.optional(),
  uniformServiceFee: amount.optional(),
  uniformDistributedUserServiceFee: amount.optional(),
  userServiceFeeDistributionPercentage: amount,
  depositReceivedAt: unix,
  displayRateDepegLossAmount: amount.optional(),
  settlementRateDepegLossAmount: amount.optional(),
  uniformRateDepegLossAmount: amount.optional(),
  refund: RefundRecordSchema.optional(),
});

export const PaymentRecordSchema = z.strictObject({
  paymentId: z.uuid(),
  clientPaymentId: z.string(),
  businessId: z.uuid(),
  locale: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  rateType: z.enum(RATE_TYPES),
  type: z.enum(PAYMENT_TYPES),
  url: z.url(),
  overpaymentPolicy: z.enum(OVERPAYMENT_POLICIES).optional(),
  refundFollowUpDepositsForOneTimePayments: z.boolean().optional(),
  processorType: z.literal('BLOCKCHAIN').describe('Deprecated.'),
  walletAddress: z.string().optional(),
  destinationTag: z.string().optional(),
  displayCurrency: z.enum(FIAT_CURRENCIES).optional(),
  expectedDisplayAmount: amount.optional(),
  expectedDisplayDistributedUserServiceFee: amount.optional(),
  actualDisplayAmount: amount,
  actualDisplayDistributedUserServiceFee: amount,
  depositCurrency: z.enum(CRYPTO_CURRENCIES).optional(),
  expectedNetwork: z.enum(NETWORKS).optional(),
  expectedDepositAmount: amount.optional(),
  expectedDepositDistributedUserServiceFee: amount.optional(),
  actualDepositAmount: amount.describe('Deprecated: the deposits carry the actual amount and currency.'),
  actualDepositDistributedUserServiceFee: amount,
  expectedUniformAmount: amount.optional(),
  actualUniformAmount: amount,
  userServiceFeeDistributionPercentage: amount,
  redirectUrl: z.url().optional(),
  redirectMode: z.enum(REDIRECT_MODES).optional(),
  expirationMinutes: z.int().min(0),
  initiatedBy: z.string().optional(),
  paymentInitiatedAt: unix,
  paymentRequestedAt: unix.optional(),
  deposits: z.array(DepositRecordSchema),
});

export const CreatedPaymentResponseSchema = z.strictObject({ paymentInfo: PaymentRecordSchema, paymentUrl: z.url() });

export const PaymentListSchema = z.strictObject({ items: z.array(PaymentRecordSchema), nextCursor: z.string().nullable() });
