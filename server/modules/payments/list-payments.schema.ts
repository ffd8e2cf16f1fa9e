/** The query of `GET /v1/payments` (CONTRACT §4): strict, so a misspelt filter is a 400, not a silently unfiltered list. */
import { z } from 'zod';
import { PAYMENT_STATUSES } from '../money/index.js';

export const ListPaymentsQuerySchema = z.strictObject({
  clientPaymentId: z.string().min(1).max(255).regex(/^[^\p{Cc}]+$/u, 'must not contain control characters').optional()
    .describe('Only the payment with this clientPaymentId.'),
  status: z.enum(PAYMENT_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1–100 (default 20).'),
  cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page.'),
});
