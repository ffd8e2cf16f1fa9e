/** Whitelisted withdrawal addresses (2023-02-09: `network` mandatory): the request and the records. */
import { z } from 'zod';
import { plainText } from '../../platform/validate.js';

export const CreateWhitelistSchema = z.strictObject({
  currency: z.string().min(1).max(16).describe('Payout currency, e.g. USDT'),
  network: z.string().min(1).max(16).describe('Mandatory since 2023-02-09; pairs as for withdrawals'),
  address: z.string().min(1).max(128),
  destinationTag: z.string().min(1).max(24).optional().describe('XRP destination tag or XLM memo id'),
  label: plainText(200).optional(),
});
export type CreateWhitelistInput = z.infer<typeof CreateWhitelistSchema>;

export const WhitelistRecordSchema = z.strictObject({
  id: z.uuid(),
  currency: z.string(),
  network: z.string(),
  address: z.string(),
  destinationTag: z.string().nullable(),
  label: z.string().nullable(),
  createdAt: z.int().describe('UNIX seconds'),
});
export const WhitelistListSchema = z.strictObject({ items: z.array(WhitelistRecordSchema) });
export const WhitelistDeletedSchema = z.strictObject({ id: z.uuid(), deleted: z.literal(true) });
