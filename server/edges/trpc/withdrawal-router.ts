/** Internal tRPC procedures for withdrawals and callbacks (CONTRACT §8). */
import { z } from 'zod';
import { listAttempts, listDeliveries, redeliver } from '../../modules/callbacks/index.js';
import { adminProcedure, operatorProcedure, router } from './init.js';
import { unixTimes } from './unix-times.rules.js';
import { WITHDRAWAL_STATUSES } from '../../modules/withdrawals/index.js';
import { decideWithdrawal, getWithdrawal, listWithdrawals } from '../../modules/withdrawals/index.js';

export const withdrawalRouter = router({
  list: operatorProcedure
    .input(
      z.strictObject({
        businessId: z.guid().optional(),
        status: z.enum(WITHDRAWAL_STATUSES).optional(),
        limit: z.int().min(1).max(100).default(20),
        cursor: z.string().max(200).optional(),
      }),
    )
    .query(({ ctx, input }) => {
      const { businessId, ...query } = input;
      return listWithdrawals(ctx.deps, businessId ?? null, query);
    }),
  get: operatorProcedure.input(z.strictObject({ withdrawalId: z.guid() })).query(({ ctx, input }) => getWithdrawal(ctx.deps, null, input.withdrawalId)),
  approve: adminProcedure
    .input(z.strictObject({ withdrawalId: z.guid() }))
    .mutation(({ ctx, input }) => decideWithdrawal(ctx.deps, input.withdrawalId, ctx.operator, 'APPROVE')),
  reject: adminProcedure
    .input(z.strictObject({ withdrawalId: z.guid() }))
    .mutation(({ ctx, input }) => decideWithdrawal(ctx.deps, input.withdrawalId, ctx.operator, 'REJECT')),
});

export const callbackRouter = router({
  /** Deliveries (newest first) with their body; filter by business, subject (withdrawal or payment id) or status. */
  list: operatorProcedure
    .input(
      z.strictObject({
        businessId: z.guid().optional(),
        subjectId: z.guid().optional(),
        status: z.enum(['PENDING', 'DELIVERED', 'EXPIRED']).optional(),
        limit: z.int().min(1).max(200).default(50),
      }),
    )
    .query(async ({ ctx, input }) => unixTimes(await listDeliveries(ctx.deps.database.db, input))),
  /** Every attempt of one delivery: time, planned time, status code, latency, error. */
  attempts: operatorProcedure.input(z.strictObject({ deliveryId: z.guid() })).query(async ({ ctx, input }) => unixTimes(await listAttempts(ctx.deps.database.db, input.deliveryId))),
  redeliver: adminProcedure.input(z.strictObject({ deliveryId: z.guid() })).mutation(async ({ ctx, input }) => {
    await redeliver(ctx.deps, input.deliveryId);
    return { deliveryId: input.deliveryId, status: 'PENDING' as const };
  }),
});
