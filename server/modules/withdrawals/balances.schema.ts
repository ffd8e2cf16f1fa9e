/** `GET /v1/balances` (CONTRACT §4): per settlement currency, what can be withdrawn and what is on its way out. */
import { z } from 'zod';

const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/).describe('Decimal string');

export const BalanceSchema = z.strictObject({
  currency: z.string().describe('Settlement currency (BTC, USDC, USDT, EUR, GBP, USD)'),
  available: z
    .string()
    .regex(/^-?[0-9]+(\.[0-9]+)?$/)
    .describe(
      'The merchant ledger balance: credited deposits minus accepted withdrawals and reversed credits. What a new withdrawal can use. Negative when a credit the chain took back had already been withdrawn: the merchant owes it, and withdrawals are refused until deposits cover it.',
    ),
  pending: decimal.describe(
    'Withdrawals accepted and not yet final (PENDING_APPROVAL, PROCESSING): already out of available; returned to it if they end FAILED, BLOCKED or REJECTED.',
  ),
});
export const BalancesResponseSchema = z.strictObject({ balances: z.array(BalanceSchema) });
export type BalancesResponse = z.infer<typeof BalancesResponseSchema>;
