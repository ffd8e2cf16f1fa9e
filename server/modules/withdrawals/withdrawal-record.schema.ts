/**
 * The withdrawal record (POST/GET /v1/withdrawals, CONTRACT §6) as a zod
 * schema: it documents the responses in /openapi.json and the tests parse
 * real responses with it, strictly.
 */
import { z } from 'zod';
import { LegalEntitySchema } from '../payments/index.js';
import { FEE_PAYERS, WITHDRAWAL_STATUSES } from './withdrawal.rules.js';

const amount = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/).describe('Decimal string');
const unix = z.int().describe('UNIX seconds');

export const WithdrawalRecordSchema = z.strictObject({
  withdrawalId: z.uuid(),
  clientWithdrawalId: z.string(),
  businessId: z.uuid(),
  status: z.enum(WITHDRAWAL_STATUSES),
  withdrawCurrency: z.string(),
  network: z.string(),
  address: z.string(),
  destinationTag: z.string().nullable(),
  displayCurrency: z.string(),
  expectedDisplayAmount: amount,
  estimatedWithdrawAmount: amount,
  settlementCurrency: z.string(),
  deductedSettlementAmount: amount,
  withdrawFee: amount,
  feePayer: z.enum(FEE_PAYERS),
  approvalsRequired: z.int(),
  approvals: z.int(),
  riskScore: z.string(),
  addressOwner: LegalEntitySchema,
  sourceRiskEntities: z.array(LegalEntitySchema),
  destinationRiskEntities: z.array(LegalEntitySchema),
  transactionId: z.string().nullable(),
  // Once COMPLETED: what was actually sent.
  actualWithdrawAmount: amount.optional(),
  actualDisplayAmount: amount.optional(),
  displayFee: amount.optional(),
  displayRateDepegLossAmount: amount.optional(),
  settlementRateDepegLossAmount: amount.optional(),
  createdAt: unix,
  completedAt: unix.nullable(),
});

export const WithdrawalListSchema = z.strictObject({ items: z.array(WithdrawalRecordSchema), nextCursor: z.string().nullable() });
