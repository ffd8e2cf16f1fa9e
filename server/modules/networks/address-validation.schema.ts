/** Address validation (2022-05-09): the GET path, the deprecated POST body and their one answer. */
import { z } from 'zod';

export const AddressValidationParamsSchema = z.strictObject({
  currency: z.string().max(16).describe('Payout currency, e.g. USDT'),
  network: z.string().max(16).describe('Network, e.g. TRX'),
  address: z.string().max(256),
});

/** The body of the deprecated `POST /api/v1/addresses/validate`. */
export const AddressValidationBodySchema = AddressValidationParamsSchema;

export const AddressValidationResultSchema = z.strictObject({
  valid: z.boolean(),
  reason: z.string().optional().describe('Why not, when valid is false'),
});
