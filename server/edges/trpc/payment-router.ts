/** Internal tRPC procedures for payments (CONTRACT §8). */
import { z } from 'zod';
import { PAYMENT_STATUSES } from '../../modules/money/index.js';
import { operatorProcedure, router } from './init.js';
import { paymentOpsProcedures } from './deposit-router.js';
import { listPayments, loadPaymentById, paymentRecord } from '../../modules/payments/index.js';

export const paymentRouter = router({
  list: operatorProcedure
    .input(
      z.strictObject({
        businessId: z.guid().optional(),
        clientPaymentId: z.string().max(255).optional(),
        status: z.enum(PAYMENT_STATUSES).optional(),
        limit: z.int().min(1).max(100).default(20),
        cursor: z.string().max(200).optional(),
      }),
    )
    .query(({ ctx, input }) => {
      const { businessId, ...query } = input;
      return listPayments(ctx.deps, businessId ?? null, query);
    }),
  get: operatorProcedure.input(z.strictObject({ paymentId: z.guid() })).query(async ({ ctx, input }) =>
    paymentRecord(ctx.deps.database.db, await loadPaymentById(ctx.deps.database.db, input.paymentId), ctx.deps.config.publicUrl),
  ),
  ...paymentOpsProcedures,
});
