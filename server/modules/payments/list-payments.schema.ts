/** The query of `GET /v1/payments` (CONTRACT §4): strict, so a misspelt filter is a 400, not a silently unfiltered list. */
import { z } from 'zod';
import { clientId, pageLimit } from '../../platform/validate.js';
import { PAYMENT_STATUSES } from '../money/index.js';

export const ListPaymentsQuerySchema = z.strictObject({
  clientPaymentId: clientId().optional()
    .describe('Only the payment with this clientPaymentId.'),
  status: z.enum(PAYMENT_STATUSES).optional(),
  limit: pageLimit(),
  cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page.'),
});
