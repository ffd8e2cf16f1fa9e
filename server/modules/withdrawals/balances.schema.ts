/** `GET /v1/balances` (CONTRACT §4): per settlement currency, what can be withdrawn and what is on its way out. */
import { z } from 'zod';

const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/).describe('Decimal string');

export const BalanceSchema = z.strictObject({
  currency: z.string().describe('Settlement currency (BTC, USDC, USDT, EUR, GBP, USD)'),
  available: decimal.describe('The merchant ledger balance: credited deposits minus accepted withdrawals. What a new withdrawal can use.'),
  pending: decimal.describe(
    'Withdrawals accepted and not yet final (PENDING_APPROVAL, PROCESSING): already out of available; returned to it if they end FAILED, BLOCKED or REJECTED.',
  ),
});
export const BalancesResponseSchema = z.strictObject({ balances: z.array(BalanceSchema) });
export type BalancesResponse = z.infer<typeof BalancesResponseSchema>;
