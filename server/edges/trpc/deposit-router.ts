/** Internal tRPC procedures for deposits, compliance, timelines, balances and sandbox simulation (CONTRACT §8). */
import { TRPCError } from '@trpc/server';
import { and, asc, desc, eq, ilike, inArray, or, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../../db/client.js';
import { deposits, events, payments, refunds } from '../../../db/schema.js';
import { SimulateDepositSchema } from '../../modules/deposits/index.js';
import { DEPOSIT_STATUSES } from '../../modules/money/index.js';
import { adminProcedure, operatorProcedure, router } from './init.js';
import { toDepositRecord } from '../../modules/payments/index.js';
import { decideCompliance } from '../../modules/deposits/index.js';
import { chooseCurrency, loadPaymentById, paymentRecord } from '../../modules/payments/index.js';
import { getBusiness } from '../../modules/businesses/index.js';
import { getBusinessBalances } from '../../modules/withdrawals/index.js';
import { byId, recentListInput } from './procedures.js';
import { unixTimes } from '../unix-times.rules.js';
import { notFound } from '../../platform/errors.js';
import { plainText } from '../../platform/validate.js';

/** Deposit records with their payment and business ids, newest first: one query, then their refunds. */
async function depositRecords(db: Queryable, where: SQL | undefined, limit: number) {
  const joined = await db
    .select({ deposit: deposits, userFeeSharePercent: payments.userFeeSharePercent })
    .from(deposits)
    .innerJoin(payments, eq(payments.id, deposits.paymentId))
    .where(where)
    .orderBy(desc(deposits.receivedAt), desc(deposits.id))
    .limit(limit);
  const rows = joined.map((j) => j.deposit);
  const share = new Map(joined.map((j) => [j.deposit.id, j.userFeeSharePercent]));
  const refundRows = rows.length ? await db.select().from(refunds).where(inArray(refunds.depositId, rows.map((r) => r.id))) : [];
  const byDeposit = new Map(refundRows.map((r) => [r.depositId, r]));
  return rows.map((d) => ({ paymentId: d.paymentId, businessId: d.businessId, ...toDepositRecord(d, byDeposit.get(d.id), share.get(d.id)!) }));
}

export const depositRouter = router({
  /** Deposits, newest first; `search` matches a transaction hash or an address. */
  list: operatorProcedure
    .input(recentListInput(DEPOSIT_STATUSES, { paymentId: z.guid().optional(), search: plainText(128).min(3).optional() }))
    .query(async ({ ctx, input }) => {
      const filters: (SQL | undefined)[] = [
        input.businessId ? eq(deposits.businessId, input.businessId) : undefined,
        input.paymentId ? eq(deposits.paymentId, input.paymentId) : undefined,
        input.status ? eq(deposits.status, input.status) : undefined,
        input.search
          ? or(
              eq(deposits.txHash, input.search),
              ilike(deposits.fromAddress, `%${input.search.replace(/[%_\\]/g, '\\$&')}%`),
              eq(deposits.toAddress, input.search),
            )
          : undefined,
      ];
      return depositRecords(ctx.deps.database.db, and(...filters), input.limit);
    }),

  /** One deposit, as `list` shows it (its payment and business ids, its refund). */
  get: operatorProcedure.input(byId('depositId')).query(async ({ ctx, input }) => {
    const [found] = await depositRecords(ctx.deps.database.db, eq(deposits.id, input.depositId), 1);
    if (!found) throw notFound(`Deposit ${input.depositId} not found.`);
    return found;
  }),

  /** Approve or reject a deposit held in COMPLIANCE_REVIEW. */
  decide: adminProcedure
    .input(z.strictObject({ depositId: z.guid(), decision: z.enum(['APPROVE', 'REJECT']) }))
    .mutation(async ({ ctx, input }) => ({
      status: await decideCompliance(ctx.deps, input.depositId, input.decision, ctx.operator),
    })),
});

/** Payment procedures beyond list/get, spread into the payments router. */
export const paymentOpsProcedures = {
  /** Every event of a payment, its deposits and refunds, in order. */
  timeline: operatorProcedure.input(byId('paymentId')).query(async ({ ctx, input }) => {
    const db = ctx.deps.database.db;
    const payment = await loadPaymentById(db, input.paymentId);
    // One query over the one events table: the payment's own events, its deposits' and their refunds'.
    const depositIds = db.select({ id: deposits.id }).from(deposits).where(eq(deposits.paymentId, payment.id));
    const refundIds = db.select({ id: refunds.id }).from(refunds).where(inArray(refunds.depositId, depositIds));
    const rows = await db
      .select()
      .from(events)
      .where(
        or(
          and(eq(events.entityType, 'payment'), eq(events.entityId, payment.id)),
          and(eq(events.entityType, 'deposit'), inArray(events.entityId, depositIds)),
          and(eq(events.entityType, 'refund'), inArray(events.entityId, refundIds)),
        ),
      )
      // ids are the order the events were written in, within one instant too
      .orderBy(asc(events.at), asc(events.id));
    return unixTimes(
      rows.map(({ entityType, entityId, fromStatus, toStatus, reason, data, at, id }) => ({
      entity: entityType as 'payment' | 'deposit' | 'refund',
      entityId,
      id,
      fromStatus,
      toStatus,
      reason,
      data,
      at,
    })),
    );
  }),

  /** Fix currency and network of a NEW payment (what the checkout does for the customer). */
  chooseCurrency: adminProcedure
    .input(z.strictObject({ paymentId: z.guid(), depositCurrency: z.string().max(10), network: z.string().max(10) }))
    .mutation(async ({ ctx, input }) => {
      const row = await chooseCurrency(ctx.deps, input.paymentId, input);
      return paymentRecord(ctx.deps.database.db, row, ctx.deps.config.publicUrl);
    }),

  /** Sandbox: simulate a deposit to a payment, as the REST test helper does. */
  simulateDeposit: adminProcedure
    .input(SimulateDepositSchema.extend({ paymentId: z.guid() }))
    .mutation(async ({ ctx, input }) => {
      if (!ctx.deps.config.sandbox || !ctx.deps.faucet) throw new TRPCError({ code: 'NOT_FOUND', message: 'Test helpers exist only in sandbox.' });
      const { paymentId, ...deposit } = input;
      const payment = await loadPaymentById(ctx.deps.database.db, paymentId);
      const simulated = await ctx.deps.faucet.simulate(ctx.deps, payment, deposit);
      return { transactionId: simulated.txHash, ingest: simulated.ingest };
    }),
};

export const balanceRouter = router({
  /** The same answer as GET /v1/balances for that business. */
  get: operatorProcedure.input(byId('businessId')).query(async ({ ctx, input }) =>
    getBusinessBalances(ctx.deps.database.db, await getBusiness(ctx.deps.database.db, input.businessId)),
  ),
});
