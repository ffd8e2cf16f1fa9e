/** Currency metadata and exchange rates for integrators (CONTRACT §4): the query of GET /v1/rates and both responses. */
import { z } from 'zod';
import { NETWORKS } from './catalog.js';

const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/).describe('Decimal string');

export const CurrencyNetworkSchema = z.strictObject({
  network: z.enum(NETWORKS),
  deposit: z.boolean().describe('Payments may be made in this currency on this network.'),
  withdraw: z.boolean().describe('Withdrawals may be paid out in this currency on this network.'),
  minAmount: decimal.nullable().describe(
    'Deposit pairs: the smallest payment (a crypto-amount create, or the amount due once a fiat payment’s currency is chosen); below it 422 AMOUNT_BELOW_MINIMUM. null when not a deposit pair.',
  ),
  minWithdrawalAmount: decimal.nullable().describe('Withdrawal pairs: the smallest withdrawal (twice the network fee). null when not a withdrawal pair.'),
  maxAmount: decimal.nullable().describe('Withdrawal pairs: the largest single withdrawal (since 2022-08-21). null when not a withdrawal pair.'),
});

export const CurrencySchema = z.strictObject({
  code: z.string(),
  type: z.enum(['CRYPTO', 'FIAT']),
  decimals: z.int().describe('Decimals accepted in amounts (fiat: ISO 4217 minor units).'),
  deposit: z.boolean(),
  withdraw: z.boolean(),
  networks: z.array(CurrencyNetworkSchema),
});

export const CurrencyMetadataSchema = z.strictObject({ currencies: z.array(CurrencySchema) });

const codes = z
  .string()
  .max(400)
  .transform((s) => s.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean));

export const RatesQuerySchema = z.strictObject({
  from: codes.describe('Comma-separated fiat and crypto codes, e.g. BTC,ETH'),
  to: codes.describe('Comma-separated fiat and crypto codes, e.g. EUR,USD'),
});

export const RatesResponseSchema = z.strictObject({
  rates: z.record(z.string(), z.record(z.string(), decimal)).describe('rates[FROM][TO]: units of TO per 1 FROM'),
  at: z.int().describe('UNIX seconds'),
  sources: z.array(
    z.strictObject({
      name: z.string(),
      ageS: z.number().nullable().describe('Age in seconds of the source’s newest quote'),
      fresh: z.boolean(),
      lastError: z.string().nullable(),
    }),
  ),
});
