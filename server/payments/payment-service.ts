/**
 * Creating and reading payments (spec §4.1, CONTRACT §4). Routes and tRPC
 * procedures call these; they do the I/O, the pricing and the record
 * building live in pure modules beside them.
 */
import { and, desc, eq, lt, or, sql } from 'drizzle-orm';
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/client.js';
import { depositAddressIndex, payments } from '../../db/schema.js';
import { enqueue } from '../../jobs/enqueue.js';
import { getBusiness, type Business } from '../businesses/business-service.js';
import type { Deps } from '../deps.js';
import { conflict, forbidden, notFound, unprocessable, validationFailed } from '../errors.js';
import { CRYPTO_DECIMALS, FIAT_DECIMALS, type PaymentStatus } from '../money/catalog.js';
import { Dec } from '../money/decimal.js';
import {
  DEFAULT_EXPIRATION_MINUTES, ZERO_EXPIRATION_MINUTES, type CreatePaymentInput,
} from './create-payment.schema.js';
import { toPaymentRecord, type PaymentRecord, type PaymentRow } from './payment-record.js';
import { priceCrypto, priceFiat } from './pricing.js';
import { recordPaymentCreated } from './transition.js';

export type Caller = { businessId: string; apiKey: string };

/** Canonical JSON (sorted keys) of the validated request: equal bodies hash equal. */
export function requestHash(input: CreatePaymentInput): string {
  const sorted = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

/** Networks the business accepts for a currency (2024-08-06): all deposit networks unless narrowed. */
export function businessAllows(business: Business, currency: string, network: string): boolean {
  const allowed = business.allowedNetworks[currency];
  return allowed === undefined || allowed.includes(network);
}

export async function createPayment(
  deps: Deps,
  caller: Caller,
  input: CreatePaymentInput,
): Promise<{ record: PaymentRecord; created: boolean }> {
  if (input.businessId.toLowerCase() !== caller.businessId) {
    throw forbidden('FORBIDDEN_BUSINESS', 'businessId does not match the business of the API key.');
  }
  const { db } = deps.database;
  const business = await getBusiness(db, caller.businessId);
  const now = deps.now();
  const type = input.type ?? 'ONE_TIME';
  const reusable = type === 'REUSABLE';
  const expirationMinutes = reusable
    ? 0
    : input.expirationMinutes === 0
      ? ZERO_EXPIRATION_MINUTES
      : (input.expirationMinutes ?? DEFAULT_EXPIRATION_MINUTES);
  const fees = { serviceFeePercent: business.serviceFeePercent, userFeeSharePercent: business.userFeeSharePercent };

  let priced: Partial<typeof payments.$inferInsert>;
  let status: PaymentStatus;
  if (input.depositCurrency && input.depositAmount && input.network) {
    if (!businessAllows(business, input.depositCurrency, input.network)) {
      throw unprocessable('NETWORK_NOT_ALLOWED', `This business does not accept ${input.depositCurrency} on ${input.network}.`, [
        { field: 'network', message: `allowed: ${business.allowedNetworks[input.depositCurrency]!.join(', ') || 'none'}` },
      ]);
    }
    const p = await priceCrypto(deps.rates, input.depositCurrency, new Dec(input.depositAmount), business.settlementCurrency, fees, now);
    status = 'PENDING';
    priced = {
      displayCurrency: p.displayCurrency,
      expectedDisplayAmount: p.expectedDisplayAmount.toFixed(FIAT_DECIMALS[p.displayCurrency]),
      expectedDisplayFee: p.expectedDisplayFee.toFixed(FIAT_DECIMALS[p.displayCurrency]),
      expectedUniformAmount: p.expectedUniformAmount.toFixed(2),
      depositCurrency: input.depositCurrency,
      network: input.network,
      expectedDepositAmount: p.expectedDepositAmount.toFixed(CRYPTO_DECIMALS[input.depositCurrency]),
      expectedDepositFee: p.expectedDepositFee.toFixed(CRYPTO_DECIMALS[input.depositCurrency]),
      lockedRate: p.rate.toString(),
      requestedAt: now,
    };
  } else if (input.displayCurrency && input.displayAmount) {
    const p = await priceFiat(deps.rates, input.displayCurrency, new Dec(input.displayAmount), fees, now);
    status = 'NEW';
    priced = {
      displayCurrency: input.displayCurrency,
      expectedDisplayAmount: p.expectedDisplayAmount.toFixed(FIAT_DECIMALS[input.displayCurrency]),
      expectedDisplayFee: p.expectedDisplayFee.toFixed(FIAT_DECIMALS[input.displayCurrency]),
      expectedUniformAmount: p.expectedUniformAmount.toFixed(2),
    };
  } else {
    // The schema guarantees one of the two; this keeps the types honest.
    throw validationFailed([{ field: 'displayCurrency', message: 'required' }]);
  }

  const hash = requestHash(input);
  return db.transaction(async (tx) => {
    if (priced.network) {
      const [{ index }] = (await tx.execute(sql`select nextval(${depositAddressIndex.seqName}) as index`)) as unknown as [{ index: string }];
      const address = deps.chain.depositAddress(input.network!, Number(index));
      priced.walletAddress = address.address;
      priced.destinationTag = address.destinationTag ?? null;
    }
    const inserted = await tx
      .insert(payments)
      .values({
        businessId: business.id,
        clientPaymentId: input.clientPaymentId,
        requestHash: hash,
        checkoutToken: randomBytes(16).toString('base64url'),
        status,
        type,
        rateType: reusable ? 'FLOATING' : (input.rateType ?? 'FIXED'),
        locale: input.locale,
        serviceFeePercent: business.serviceFeePercent,
        userFeeSharePercent: business.userFeeSharePercent,
        overpaymentPolicy: business.overpaymentPolicy,
        refundFollowUpDeposits: business.refundFollowUpDeposits,
        redirectUrl: input.redirectUrl ?? null,
        redirectMode: input.redirectMode ?? 'PARENT',
        expirationMinutes,
        expiresAt: reusable ? null : new Date(now.getTime() + expirationMinutes * 60_000),
        initiatedBy: caller.apiKey,
        initiatedAt: now,
        createdAt: now,
        ...priced,
      })
      // A unique index, not a read-then-write: concurrent duplicates wait here and then see the winner.
      .onConflictDoNothing({ target: [payments.businessId, payments.clientPaymentId] })
      .returning();
    const row = inserted[0];
    if (!row) {
      const existing = await tx.query.payments.findFirst({
        where: and(eq(payments.businessId, business.id), eq(payments.clientPaymentId, input.clientPaymentId)),
      });
      if (!existing) throw conflict('IDEMPOTENCY_CONFLICT', 'A payment with this clientPaymentId is being created; retry.');
      if (existing.requestHash !== hash) {
        throw conflict('IDEMPOTENCY_CONFLICT', `clientPaymentId ${input.clientPaymentId} was already used with a different request.`);
      }
      return { record: toPaymentRecord(existing, deps.config.publicUrl), created: false };
    }
    await recordPaymentCreated(tx, row.id, status, now);
    if (row.expiresAt) {
      await enqueue(tx, 'expire_payment', { paymentId: row.id }, { runAt: row.expiresAt, jobKey: `expire_payment:${row.id}` });
    }
    return { record: toPaymentRecord(row, deps.config.publicUrl), created: true };
  });
}

export async function loadPayment(db: Queryable, businessId: string, paymentId: string): Promise<PaymentRow> {
  const row = await db.query.payments.findFirst({ where: and(eq(payments.id, paymentId), eq(payments.businessId, businessId)) });
  if (!row) throw notFound(`Payment ${paymentId} not found.`);
  return row;
}

export async function getPayment(deps: Deps, businessId: string, paymentId: string): Promise<PaymentRecord> {
  return toPaymentRecord(await loadPayment(deps.database.db, businessId, paymentId), deps.config.publicUrl);
}

export type ListPaymentsQuery = { clientPaymentId?: string; status?: PaymentStatus; limit: number; cursor?: string };

/** Opaque cursor: the (createdAt, id) of the last item of the previous page. */
export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } | null {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  if (!id || !/^[0-9a-f-]{36}$/.test(id) || Number.isNaN(createdAt.getTime())) return null;
  return { createdAt, id };
}

export async function listPayments(
  deps: Deps,
  businessId: string | null,
  query: ListPaymentsQuery,
): Promise<{ items: PaymentRecord[]; nextCursor: string | null }> {
  const after = query.cursor ? decodeCursor(query.cursor) : null;
  if (query.cursor && !after) throw validationFailed([{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
  const rows = await deps.database.db
    .select()
    .from(payments)
    .where(
      and(
        businessId ? eq(payments.businessId, businessId) : undefined,
        query.clientPaymentId ? eq(payments.clientPaymentId, query.clientPaymentId) : undefined,
        query.status ? eq(payments.status, query.status) : undefined,
        after
          ? or(lt(payments.createdAt, after.createdAt), and(eq(payments.createdAt, after.createdAt), lt(payments.id, after.id)))
          : undefined,
      ),
    )
    .orderBy(desc(payments.createdAt), desc(payments.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((row) => toPaymentRecord(row, deps.config.publicUrl)),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null,
  };
}

/** Any business's payment, for operators. */
export async function loadPaymentById(db: Queryable, paymentId: string): Promise<PaymentRow> {
  const row = await db.query.payments.findFirst({ where: eq(payments.id, paymentId.toLowerCase()) });
  if (!row) throw notFound(`Payment ${paymentId} not found.`);
  return row;
}
