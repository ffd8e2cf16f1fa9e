/** Internal tRPC procedures for payments (CONTRACT §8). */
import { operatorProcedure, router } from './init.js';
import { paymentOpsProcedures } from './deposit-router.js';
import { businessList, byId } from './procedures.js';
import { ListPaymentsQuerySchema, listPayments, loadPaymentById, paymentRecord } from '../../modules/payments/index.js';

export const paymentRouter = router({
  list: businessList(ListPaymentsQuerySchema, listPayments),
  get: operatorProcedure.input(byId('paymentId')).query(async ({ ctx, input }) =>
    paymentRecord(ctx.deps.database.db, await loadPaymentById(ctx.deps.database.db, input.paymentId), ctx.deps.config.publicUrl),
  ),
  ...paymentOpsProcedures,
});
