/** Internal tRPC procedures for withdrawals and callbacks (CONTRACT §8). */
import { z } from 'zod';
import { listAttempts, listDeliveries, redeliver } from '../../modules/callbacks/index.js';
import { adminProcedure, operatorProcedure, router } from './init.js';
import { businessList, byId, recentListInput, withdrawalDecision } from './procedures.js';
import { unixTimes } from '../unix-times.rules.js';
import { getWithdrawal, ListWithdrawalsQuerySchema, listWithdrawals } from '../../modules/withdrawals/index.js';

export const withdrawalRouter = router({
  list: businessList(ListWithdrawalsQuerySchema, listWithdrawals),
  get: operatorProcedure.input(byId('withdrawalId')).query(({ ctx, input }) => getWithdrawal(ctx.deps, null, input.withdrawalId)),
  approve: withdrawalDecision('APPROVE'),
  reject: withdrawalDecision('REJECT'),
});

export const callbackRouter = router({
  /** Deliveries (newest first) with their body; filter by business, subject (withdrawal or payment id) or status. */
  list: operatorProcedure
    .input(recentListInput(['PENDING', 'DELIVERED', 'EXPIRED'], { subjectId: z.guid().optional() }))
    .query(async ({ ctx, input }) => unixTimes(await listDeliveries(ctx.deps.database.db, input))),
  /** Every attempt of one delivery: time, planned time, status code, latency, error. */
  attempts: operatorProcedure.input(byId('deliveryId')).query(async ({ ctx, input }) => unixTimes(await listAttempts(ctx.deps.database.db, input.deliveryId))),
  redeliver: adminProcedure.input(byId('deliveryId')).mutation(async ({ ctx, input }) => {
    await redeliver(ctx.deps, input.deliveryId);
    return { deliveryId: input.deliveryId, status: 'PENDING' as const };
  }),
});
