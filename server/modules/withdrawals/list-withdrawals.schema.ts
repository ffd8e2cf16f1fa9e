/** Queries and sandbox requests around withdrawal records (CONTRACT §4, §6): strict, unknown keys are a 400. */
import { z } from 'zod';
import { clientId, pageLimit } from '../../platform/validate.js';
import { WITHDRAWAL_STATUSES } from './withdrawal.rules.js';

export const ListWithdrawalsQuerySchema = z.strictObject({
  status: z.enum(WITHDRAWAL_STATUSES).optional(),
  clientWithdrawalId: clientId().optional(),
  limit: pageLimit(),
  cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page.'),
});

/** Sandbox: the outcome forced on a withdrawal. */
export const ForceOutcomeSchema = z.strictObject({ status: z.enum(['COMPLETED', 'FAILED', 'BLOCKED']) });
