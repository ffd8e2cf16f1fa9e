/**
 * The two callbacks Kassa sends, as zod schemas: the OpenAPI document lists
 * them under `webhooks`, and the tests check real bodies against them.
 */
import { z } from 'zod';
import { LegalEntitySchema, PaymentRecordSchema } from '../payments/index.js';

const amount = z.string().describe('decimal string');
const nullAmount = z.null();

const WithdrawalCallbackBase = {
  clientWithdrawalId: z.string(),
  businessId: z.string(),
  withdrawalId: z.string(),
  displayCurrency: z.string(),
  withdrawCurrency: z.string(),
  settlementCurrency: z.string(),
  expectedDisplayAmount: amount,
  estimatedWithdrawAmount: amount,
  toTxAddress: z.string().describe('the address; on destination-tag networks `address?dt=tag`'),
  txAddressOwner: LegalEntitySchema,
};

/** POSTed to the business's withdrawalCallbackUrl when a withdrawal ends (CONTRACT §6). */
export const WithdrawalCallbackSchema = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('COMPLETED'),
    ...WithdrawalCallbackBase,
    actualDisplayAmount: amount,
    actualWithdrawAmount: amount,
    deductedSettlementAmount: amount,
    withdrawFee: amount,
    displayFee: amount,
    displayRateDepegLossAmount: amount,
    settlementRateDepegLossAmount: amount,
    transactionId: z.string(),
  }),
  z.strictObject({ status: z.literal('FAILED'), ...WithdrawalCallbackBase }),
  z.strictObject({
    status: z.literal('BLOCKED'),
    ...WithdrawalCallbackBase,
    actualDisplayAmount: nullAmount,
    actualWithdrawAmount: nullAmount,
    deductedSettlementAmount: nullAmount,
    withdrawFee: nullAmount,
    displayFee: nullAmount,
    displayRateDepegLossAmount: nullAmount,
    settlementRateDepegLossAmount: nullAmount,
    settlementServiceFee: nullAmount,
    settlementMerchantTransactionFee: nullAmount,
    transactionId: z.null(),
  }),
]);

/**
 * POSTed to the business's paymentCallbackUrl on every payment status change (CONTRACT §6), and when a
 * deposit is credited with the status unchanged (`payment.deposit_credited`, `previousStatus` = `status`).
 */
export const PaymentCallbackSchema = z.strictObject({
  type: z
    .enum(['payment.status_changed', 'payment.deposit_credited'])
    .describe('payment.deposit_credited: money credited with the status unchanged (a REUSABLE payment’s next deposit, a partial one, a late one to an EXPIRED payment)'),
  paymentId: z.string(),
  clientPaymentId: z.string(),
  businessId: z.string(),
  status: z.string(),
  previousStatus: z.string().nullable(),
  changedAt: z.number().int().describe('unix seconds'),
  sequence: z.number().int().positive().describe("the payment's events counted, this change included: a callback whose sequence is not above the last one applied for this payment is older news (a retry can arrive after a later change's callback)"),
  payment: PaymentRecordSchema,
});
