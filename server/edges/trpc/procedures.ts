/**
 * The shapes the internal procedures share, built once: the input naming one row, a business's
 * keyset-paged list (the REST list's own query schema, plus which business), the console's
 * newest-first lists, and an operator's decision on a withdrawal.
 */
import { z } from 'zod';
import { plainText } from '../../platform/validate.js';
import type { Deps } from '../../deps.js';
import { decideWithdrawal } from '../../modules/withdrawals/index.js';
import { adminProcedure, operatorProcedure } from './init.js';

/** The input of a procedure about one row: `{[key]: uuid}`, nothing else. */
export const byId = <K extends string>(key: K) => z.strictObject({ [key]: z.guid() } as Record<K, z.ZodGUID>);

/**
 * The list a REST route answers, for any business: its strict query schema plus `businessId`
 * (absent: every business), handed to the module's list function as the route hands it.
 */
export function businessList<Q extends z.ZodObject, R>(
  query: Q,
  list: (deps: Deps, businessId: string | null, query: z.output<Q>) => Promise<R>,
) {
  return operatorProcedure.input(query.extend({ businessId: z.guid().optional() })).query(({ ctx, input }) => {
    const { businessId, ...rest } = input as z.output<Q> & { businessId?: string };
    return list(ctx.deps, businessId ?? null, rest as z.output<Q>);
  });
}

/** The console's newest-first list filters: a business, a status of the entity, up to 200 rows (default 50), and `filters`. */
export function recentListInput<S extends readonly [string, ...string[]], F extends z.ZodRawShape>(statuses: S, filters: F) {
  return z.strictObject({
    businessId: z.guid().optional(),
    status: z.enum(statuses).optional(),
    limit: z.int().min(1).max(200).default(50),
    ...filters,
  });
}

/** An admin's approval or rejection of a withdrawal waiting for approvals. */
export const withdrawalDecision = (decision: 'APPROVE' | 'REJECT') =>
  adminProcedure
    // `reason`: why, kept in the withdrawal's event (the CLI's --reason).
    .input(byId('withdrawalId').extend({ reason: plainText(500).optional() }))
    .mutation(({ ctx, input }) => decideWithdrawal(ctx.deps, input.withdrawalId, ctx.operator, decision, input.reason));
