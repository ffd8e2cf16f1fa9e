/** The sandbox's simulated deposit: the request of the REST test helper, the tRPC procedure and the CLI, and the REST answer. */
import { z } from 'zod';
import { CRYPTO_CURRENCIES, DELISTED_CURRENCIES, NETWORKS } from '../money/index.js';
import { DepositRecordSchema, PaymentRecordSchema } from '../payments/index.js';

export const SimulateDepositSchema = z.strictObject({
  depositCurrency: z.enum([...CRYPTO_CURRENCIES, ...DELISTED_CURRENCIES]),
  network: z.enum(NETWORKS),
  amount: z.string().max(64),
  fromAddress: z.string().min(1).max(128).optional(),
  riskScore: z.string().regex(/^(10(\.0)?|[0-9](\.[0-9])?)$/, 'a score from 0 to 10 with at most one decimal').optional(),
  confirm: z.boolean().optional().describe('true (default): confirms after the delay; false: dropped from the chain (deposit FAILED).'),
});
export type SimulateDepositInput = z.infer<typeof SimulateDepositSchema>;

export const SimulatedDepositResponseSchema = z.strictObject({
  transactionId: z.string().describe('The simulated transaction hash'),
  deposit: DepositRecordSchema.nullable().describe('The deposit as recorded (null when the chain report was ignored)'),
  payment: PaymentRecordSchema,
});
