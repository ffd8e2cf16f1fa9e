/**
 * The `POST /v1/withdrawals` body (CONTRACT §6). Shape errors are 400; the
 * business rules (pairs, maximum, balance, address, whitelist) are checked
 * by the service and refused with 422 and a code of their own.
 */
import { z } from 'zod';
import { clientId } from '../../platform/validate.js';
import { FIAT_CURRENCIES, FIAT_DECIMALS, SETTLEMENT_CURRENCIES } from '../money/index.js';
import { parseAmount } from '../money/index.js';
import { FEE_PAYERS } from './withdrawal.rules.js';

const decimalString = z.string().max(64).describe('Positive decimal string');

export const CreateWithdrawalSchema = z
  .strictObject({
    clientWithdrawalId: clientId(),
    businessId: z.guid(),
    withdrawCurrency: z.string().min(1).max(16).describe('Payout currency, e.g. USDT'),
    network: z.string().min(1).max(16).describe('Withdrawal network, e.g. TRX (MAIN is no longer valid)'),
    address: z.string().min(1).max(128),
    destinationTag: z.string().min(1).max(24).optional().describe('XRP destination tag or XLM memo id'),
    displayCurrency: z.enum(FIAT_CURRENCIES).optional(),
    displayAmount: decimalString.optional().describe('Amount in displayCurrency; give this or amount'),
    amount: decimalString.optional().describe('Amount in withdrawCurrency; give this or displayAmount'),
    settlementCurrency: z.enum(SETTLEMENT_CURRENCIES).optional().describe('Balance to debit; default the business settlement currency'),
    feePayer: z.enum(FEE_PAYERS).optional().describe('Who pays the network fee; default the business setting'),
  })
  .superRefine((body, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((body.amount === undefined) === (body.displayAmount === undefined)) {
      issue('amount', 'give exactly one of amount (in withdrawCurrency) or displayAmount (in displayCurrency)');
    }
    if (body.displayAmount !== undefined) {
      const decimals = FIAT_DECIMALS[body.displayCurrency ?? 'EUR'];
      if (!parseAmount(body.displayAmount, decimals).ok) issue('displayAmount', `must be a positive decimal string with at most ${decimals} decimals`);
    }
    if (body.amount !== undefined && !parseAmount(body.amount, 18).ok) issue('amount', 'must be a positive decimal string');
  });

export type CreateWithdrawalInput = z.infer<typeof CreateWithdrawalSchema>;
