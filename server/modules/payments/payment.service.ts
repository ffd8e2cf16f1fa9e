/**
 * Creating and reading payments (spec §4.1, CONTRACT §4). Routes and tRPC
 * procedures call these; they do the I/O, the pricing and the record
 * building live in pure modules beside them.
 */
import { assertOffered } from '../networks/index.js';
import { and, eq, getTableColumns, sql, type Column } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { randomUUID } from 'node:crypto';
import { requestHash } from '../../platform/idempotency.js';
import { randomToken } from '../../platform/secrets.js';
import { batched } from '../../platform/batch.js';
import { answered, BATCHES_IN_FLIGHT, preparedPerPool, type Database, type Queryable, type Sql } from '../../../db/client.js';
import { deposits, payments, refunds } from '../../../db/schema.js';
import { assertProofHolds, getBusiness, proofHolds, type Business, type CallerProof } from '../businesses/index.js';
import type { PaymentsDeps as Deps } from './ports.js';
import { conflict, forbidden, notFound, refusedForNow, unprocessable, validationFailed } from '../../platform/errors.js';
import { keyset } from '../../platform/cursor.js';
import {
  CRYPTO_DECIMALS, DEPOSIT_NETWORKS, FIAT_DECIMALS, isCrypto, type FiatCurrency, type Network, type PaymentStatus,
} from '../money/index.js';
import { Dec } from '../money/index.js';
import { UNIFORM_CURRENCY, type PricedCurrency, type RateProvenance } from '../money/index.js';
import { valuationRates, type LockedRates } from '../money/index.js';
import {
  withDefaults, type CreatePaymentInput,
} from './create-payment.schema.js';
import { toPaymentRecord, type PaymentRecord, type PaymentRow } from './payment-record.rules.js';
import { priceCrypto, priceFiat, priceInCrypto } from './pricing.js';
import { assertAboveMinimum } from './minimum.rules.js';
import { transitionPayment } from './payment-transition.js';
import { collectDeposits, loadDeposits, type LoadedDeposits } from './deposit-reads.js';
import { cachedPaymentJson } from './payment-read-cache.js';
import { paymentActuals, toDepositRecord } from './deposit-record.rules.js';

/**
 * Who creates: the business and key of the request (and the business row when authentication
 * already read it, or took it from its cache: then `proof` is what the INSERT confirms).
 */
export type Caller = { businessId: string; apiKey: string; business?: Business; proof?: CallerProof };

/** Networks the business accepts for a currency (2024-08-06): all deposit networks unless narrowed. */
export function businessAllows(business: Business, currency: string, network: string): boolean {
  const allowed = business.allowedNetworks[currency];
  return allowed === undefined || allowed.includes(network);
}

/** Columns recording the rates locked when the currency is fixed. */
export function lockedColumns(locked: LockedRates) {
  return {
    lockedRate: locked.display.toString(),
    lockedRateSettlement: locked.settlement.toString(),
    lockedRateUniform: locked.uniform.toString(),
  };
}

/** The rate that priced a payment, with its sources and time (stored as `pricing_rate`). */
export async function pricingRate(deps: Deps, from: PricedCurrency, to: PricedCurrency, at: Date) {
  return pricingRateColumn(from, to, await deps.rates.provenance(from, to, at));
}

/** The `pricing_rate` column of a rate already asked. */
function pricingRateColumn(from: PricedCurrency, to: PricedCurrency, p: { rate: Dec } & RateProvenance) {
  return { pricingRate: { from, to, rate: p.rate.toString(), sources: p.sources, at: p.at.toISOString() } };
}

/** A fresh derivation index → the deposit address (and tag) for a payment, inside its transaction. */
export async function assignAddress(tx: Queryable, deps: Deps, network: Network) {
  const [row] = (await tx.execute(sql`select nextval(${deps.networks.addressSequence(network)}) as index`)) as unknown as [{ index: string }];
  const index = Number(row.index);
  const address = deps.networks.depositAddress(network, index);
  return { walletAddress: address.address, destinationTag: address.destinationTag ?? null, addressIndex: index };
}

type PaymentInsert = Omit<typeof payments.$inferInsert, 'id'>;
/** Every column but the generated id: no other column has a default that an explicit null would override. */
const INSERT_COLUMNS = Object.entries(getTableColumns(payments)).filter(([name]) => name !== 'id') as [keyof PaymentInsert, Column][];

/**
 * The creating INSERT, for every create that reaches it in the same turn of the event loop
 * (platform/batch.ts): one statement and one commit for the batch, each row still its own
 * outcome. Its text is built once (drizzle building a 35-column INSERT was a fifth of the create
 * path's CPU). The batch goes as one JSON parameter, an array of rows, each row an array of its
 * columns' values in `ALL_COLUMNS` order, each value its column's own encoding as text (or null),
 * cast to the column's type in the statement: one parameter, not one array a column (postgres.js
 * spent ~0.14 ms preparing the 38 parameters of each statement, more than JSON.stringify of a whole
 * batch). Rows are arrays read by position from `jsonb`, not objects read by `json_to_recordset`,
 * which builds a hash table of each object's keys: PostgreSQL's CPU for reading a 5-row batch fell
 * from 166 to 100 µs (docs/performance-history.md, twenty-eighth round). A row from a cached caller
 * is written only if its proof holds (modules/businesses/caller-proof.ts), so authentication and
 * creation stay one round trip. The id is drawn here and only it comes back: the row is the values
 * sent (no column but the id has a default, no trigger changes them), so the database neither
 * formats nor sends 35 columns that the process already has.
 */
const ALL_COLUMNS = [['id', getTableColumns(payments).id] as const, ...INSERT_COLUMNS];
/** A batch row's positions: the payment's columns, then the caller's proof (null when none). */
const PROOF_AT = ALL_COLUMNS.length;
const INSERT_TEXT = (() => {
  const names = ALL_COLUMNS.map(([, column]) => `"${column.name}"`);
  const casts = ALL_COLUMNS.map(([, column], i) => `(v->>${i})::${column.getSQLType()}`);
  const [keyId, keyVersion, businessVersion] = [0, 1, 2].map((i) => sql.raw(`(v->>${PROOF_AT + i})`));
  const proof = new PgDialect().sqlToQuery(proofHolds({ apiKeyId: keyId!, keyVersion: keyVersion!, businessVersion: businessVersion! })).sql;
  // A unique index, not a read-then-write: a concurrent duplicate waits here for the winner to
  // commit, and a duplicate within the batch is skipped like one from another batch.
  return `insert into payments (${names.join(', ')})
    select ${casts.join(', ')}
    from jsonb_array_elements($1::text::jsonb) as v
    where (v->>${PROOF_AT}) is null or ${proof}
    on conflict (business_id, client_payment_id) do nothing returning id`;
})();

/**
 * A column's value as text: its column's own encoder (drizzle would also encode a null as
 * `String(null)`). Well-formed, as UTF-8 encoding made it when each value was its own parameter:
 * a lone surrogate (valid in a JSON body, and in a clientPaymentId) becomes U+FFFD, where JSON
 * would carry it as an escape that PostgreSQL's json parser refuses.
 */
function driverValue(column: Column, value: unknown): string | null {
  return value == null ? null : String(column.mapToDriverValue(value)).toWellFormed();
}

/**
 * A create waiting for its batch: its row already as the JSON the statement reads, written
 * when the create joins the batch rather than when the batch goes. The batch goes the moment the
 * one before it comes back, and until it is sent the database has nothing to do: work done there is
 * on every create's path (the batch sent 0.3 ms later, after the answers of the one back, made 12%
 * fewer creates a second, eight alternating rounds).
 */
type PendingInsert = { id: string; businessId: string; clientPaymentId: string; json: string };

const compareKeys = (a: PendingInsert, b: PendingInsert) =>
  a.businessId < b.businessId ? -1 : a.businessId > b.businessId ? 1 : a.clientPaymentId < b.clientPaymentId ? -1 : a.clientPaymentId > b.clientPaymentId ? 1 : 0;

/** The row as the batch's JSON carries it: its values by position (`INSERT_TEXT`), the proof's last. */
function pendingInsert(id: string, values: PaymentInsert, proof: CallerProof | undefined): PendingInsert {
  const row: (string | null)[] = [id];
  for (const [name, column] of INSERT_COLUMNS) row.push(driverValue(column, values[name]));
  if (proof) row.push(proof.apiKeyId, proof.keyVersion, proof.businessVersion);
  return { id, businessId: values.businessId, clientPaymentId: values.clientPaymentId, json: JSON.stringify(row) };
}

/** The ids of the rows written (a replayed clientPaymentId or a stale proof writes nothing). */
async function insertRows(client: Sql, rows: readonly PendingInsert[]): Promise<Set<string>> {
  // In the unique index's order, so two batches holding the same clientPaymentIds take their
  // locks in the same order and one waits for the other instead of deadlocking.
  const ordered = [...rows].sort(compareKeys);
  const batch = `[${ordered.map((row) => row.json).join(',')}]`;
  const written = await answered(client.unsafe<{ id: string }[]>(INSERT_TEXT, [batch], { prepare: true }));
  return new Set(written.map((row) => row.id));
}

/**
 * Up to 64 creates a statement. While a batch is at the database (BATCHES_IN_FLIGHT) the next one
 * gathers, and goes once it is as large as the one out (`pipelined`): on the creates' own connection
 * it then waits in the backend's socket and runs as soon as the one ahead commits, so the database
 * no longer waits for Kassa between two batches. `npm run bench:ab`, eight rounds of 5 s, twice:
 * 3,306 against 3,101 and 3,272 against 2,838 creates/s, faster in 7 and 6 of 8 rounds, PostgreSQL's
 * CPU a create the same (0.139 and 0.137, 0.149 and 0.147 ms); a third batch let out as well: 2,494
 * against 2,684; the next batch let out whatever its size when the first of two comes back: 2,899
 * against 3,062 (docs/performance-history.md, twenty-eighth round).
 */
const CREATE_BATCH = { maxSize: 64, maxInFlight: BATCHES_IN_FLIGHT, pipelined: 2, name: 'payment_create' };

/** Each pool's batcher of creates. */
const insertBatch = preparedPerPool((database: Database) =>
  batched<PendingInsert, boolean>(async (items) => {
    const written = await insertRows(database.creates, items);
    return items.map((item) => written.has(item.id));
  }, CREATE_BATCH),
);

/** The new payment's row, or undefined when nothing was written (a replayed clientPaymentId, or a stale proof). */
async function insertPayment(deps: Deps, values: PaymentInsert, proof: CallerProof | undefined): Promise<PaymentRow | undefined> {
  const id = randomUUID();
  if (!(await insertBatch(deps.database)(pendingInsert(id, values, proof)))) return undefined;
  // The row is the values sent (the INSERT returns only the id), filled in one object.
  const row: Record<string, unknown> = { id };
  for (const [name] of INSERT_COLUMNS) row[name] = values[name] ?? null;
  return row as PaymentRow;
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
  const business = caller.business ?? (await getBusiness(db, caller.businessId));
  const now = deps.now();
  const request = withDefaults(input);
  const reusable = request.type === 'REUSABLE';
  // REUSABLE: none (stored as 0).
  const expirationMinutes = request.expirationMinutes ?? 0;
  const hash = requestHash(request);
  let priced: Partial<typeof payments.$inferInsert> & { pricedIn: 'FIAT' | 'CRYPTO' };
  let status: PaymentStatus;
  try {
    ({ priced, status } = await price(deps, business, input, now));
  } catch (error) {
    // A replay returns the payment the first request made, whatever has changed since (rates out, the
    // network's node down, the business's networks narrowed): the refusal is only for a new payment.
    if (refusedForNow(error)) {
      const original = await readSnapshot(deps, (tx) => replayed(tx, deps, business.id, input, hash));
      if (original) return original;
    }
    throw error;
  }
  // One statement, so one round trip and atomic on its own: the trigger `payments_created_events`
  // (db/migrations/0011_payment_created_per_statement.sql) writes the creation events of its rows, and the expiry is
  // scheduled from expiresAt (payments/expiry.ts).
  // Only a crypto-priced payment first draws its deposit address (a sequence, so a replay's
  // unused index is a harmless gap).
  if (priced.network) Object.assign(priced, await assignAddress(db, deps, priced.network as Network));
  const values: PaymentInsert = {
    businessId: business.id,
    clientPaymentId: input.clientPaymentId,
    requestHash: hash,
    checkoutToken: randomToken('', 16),
    status,
    type: request.type,
    rateType: request.rateType,
    locale: input.locale,
    serviceFeePercent: business.serviceFeePercent,
    userFeeSharePercent: business.userFeeSharePercent,
    settlementCurrency: business.settlementCurrency,
    riskReviewThreshold: business.riskReviewThreshold,
    riskBlockThreshold: business.riskBlockThreshold,
    overpaymentPolicy: business.overpaymentPolicy,
    refundFollowUpDeposits: business.refundFollowUpDeposits,
    redirectUrl: input.redirectUrl ?? null,
    redirectMode: request.redirectMode,
    expirationMinutes,
    expiresAt: reusable ? null : new Date(now.getTime() + expirationMinutes * 60_000),
    initiatedBy: caller.apiKey,
    initiatedAt: now,
    createdAt: now,
    ...priced,
  };
  const row = await insertPayment(deps, values, caller.proof);
  if (row) return { record: toPaymentRecord(row, deps.config.publicUrl), created: true };
  // Nothing written: a replay of the clientPaymentId, or (a cached caller) a key or business changed since.
  await assertProofHolds(db, caller.proof);
  const original = await readSnapshot(deps, (tx) => replayed(tx, deps, business.id, input, hash));
  if (!original) throw conflict('IDEMPOTENCY_CONFLICT', 'A payment with this clientPaymentId is being created; retry.');
  return original;
}

/**
 * The payment an earlier request with this clientPaymentId made, if any (`null` when there is none);
 * 409 IDEMPOTENCY_CONFLICT when that request differed.
 */
async function replayed(
  tx: Queryable,
  deps: Deps,
  businessId: string,
  input: CreatePaymentInput,
  hash: string,
): Promise<{ record: PaymentRecord; created: false } | null> {
  const existing = await tx.query.payments.findFirst({
    where: and(eq(payments.businessId, businessId), eq(payments.clientPaymentId, input.clientPaymentId)),
  });
  if (!existing) return null;
  // A payment created before defaults were written out has the hash of the request as it came.
  if (existing.requestHash !== hash && existing.requestHash !== requestHash(input)) {
    throw conflict('IDEMPOTENCY_CONFLICT', `clientPaymentId ${input.clientPaymentId} was already used with a different request.`);
  }
  return { record: await paymentRecord(tx, existing, deps.config.publicUrl), created: false };
}

/** The new payment's amounts, rates and first status, from the request: fiat-priced (NEW) or crypto-priced (PENDING). */
async function price(
  deps: Deps,
  business: Business,
  input: CreatePaymentInput,
  now: Date,
): Promise<{ priced: Partial<typeof payments.$inferInsert> & { pricedIn: 'FIAT' | 'CRYPTO' }; status: PaymentStatus }> {
  const fees = { serviceFeePercent: business.serviceFeePercent, userFeeSharePercent: business.userFeeSharePercent };
  let priced: Partial<typeof payments.$inferInsert> & { pricedIn: 'FIAT' | 'CRYPTO' };
  let status: PaymentStatus;
  if (input.depositCurrency && input.depositAmount && input.network) {
    assertOffered(deps.networks, input.depositCurrency, input.network);
    if (!businessAllows(business, input.depositCurrency, input.network)) {
      throw unprocessable('NETWORK_NOT_ALLOWED', `This business does not accept ${input.depositCurrency} on ${input.network}.`, [
        { field: 'network', message: `allowed: ${business.allowedNetworks[input.depositCurrency]!.join(', ') || 'none'}` },
      ]);
    }
    assertAboveMinimum(input.depositCurrency, input.network, new Dec(input.depositAmount), 'depositAmount');
    const p = await priceCrypto(deps.rates, input.depositCurrency, new Dec(input.depositAmount), business.settlementCurrency, fees, now);
    const locked = await valuationRates(deps.rates, input.depositCurrency, p.displayCurrency, business.settlementCurrency as PricedCurrency, now);
    status = 'PENDING';
    priced = {
      displayCurrency: p.displayCurrency,
      expectedDisplayAmount: p.expectedDisplayAmount.toFixed(FIAT_DECIMALS[p.displayCurrency]),
      expectedDisplayFee: p.expectedDisplayFee.toFixed(FIAT_DECIMALS[p.displayCurrency]),
      expectedUniformAmount: p.expectedUniformAmount.toFixed(2),
      pricedIn: 'CRYPTO',
      depositCurrency: input.depositCurrency,
      network: input.network,
      expectedDepositAmount: p.expectedDepositAmount.toFixed(CRYPTO_DECIMALS[input.depositCurrency]),
      expectedDepositFee: p.expectedDepositFee.toFixed(CRYPTO_DECIMALS[input.depositCurrency]),
      ...lockedColumns(locked),
      ...(await pricingRate(deps, input.depositCurrency, p.displayCurrency, now)),
      requestedAt: now,
    };
  } else if (input.displayCurrency && input.displayAmount) {
    const provenance = await deps.rates.provenance(input.displayCurrency, UNIFORM_CURRENCY, now);
    const p = priceFiat(input.displayCurrency, new Dec(input.displayAmount), fees, provenance.rate);
    status = 'NEW';
    priced = {
      pricedIn: 'FIAT',
      displayCurrency: input.displayCurrency,
      expectedDisplayAmount: p.expectedDisplayAmount.toFixed(FIAT_DECIMALS[input.displayCurrency]),
      expectedDisplayFee: p.expectedDisplayFee.toFixed(FIAT_DECIMALS[input.displayCurrency]),
      expectedUniformAmount: p.expectedUniformAmount.toFixed(2),
      ...pricingRateColumn(input.displayCurrency, UNIFORM_CURRENCY, provenance),
    };
  } else {
    // The schema guarantees one of the two; this keeps the types honest.
    throw validationFailed([{ field: 'displayCurrency', message: 'required' }]);
  }
  return { priced, status };
}

export async function loadPayment(db: Queryable, businessId: string, paymentId: string): Promise<PaymentRow> {
  const row = await db.query.payments.findFirst({ where: and(eq(payments.id, paymentId), eq(payments.businessId, businessId)) });
  if (!row) throw notFound(`Payment ${paymentId} not found.`);
  return row;
}

/** API records of payments, with their deposits, refunds and actual amounts (one query for all deposits). */
/**
 * Read inside one REPEATABLE READ, read-only transaction, so a payment row
 * and its deposits come from the same snapshot (never a status from before a
 * change with deposits from after it).
 */
export function readSnapshot<T>(deps: Deps, read: (tx: Queryable) => Promise<T>): Promise<T> {
  return deps.database.db.transaction(read, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

export async function paymentRecords(db: Queryable, rows: PaymentRow[], publicUrl: string): Promise<PaymentRecord[]> {
  return recordsOf(rows, await loadDeposits(db, rows.map((r) => r.id)), publicUrl);
}

/** API records of payments from their rows and their loaded deposits and refunds. Pure. */
function recordsOf(rows: PaymentRow[], loaded: LoadedDeposits, publicUrl: string): PaymentRecord[] {
  return rows.map((row) => {
    const own = loaded.deposits.filter((d) => d.paymentId === row.id);
    const records = own.map((d) => toDepositRecord(d, loaded.refunds.get(d.id), row.userFeeSharePercent));
    const credited = own.filter((d) => d.credited);
    const actuals = credited.length ? paymentActuals(credited, { deposit: row.depositCurrency, display: row.displayCurrency }) : undefined;
    return toPaymentRecord(row, publicUrl, records, actuals);
  });
}

export async function paymentRecord(db: Queryable, row: PaymentRow, publicUrl: string): Promise<PaymentRecord> {
  const [record] = await paymentRecords(db, [row], publicUrl);
  return record!;
}

/**
 * A payment with its deposits and their refunds in one statement, so from
 * one snapshot without a transaction (a prepared query: the hot read). The
 * guarded variant also confirms a caller from the key cache (caller-proof.ts).
 */
const paymentWithDeposits = (guarded: boolean) =>
  preparedPerPool((db) =>
    db
      .select({ payment: payments, deposit: deposits, refund: refunds })
      .from(payments)
      .leftJoin(deposits, eq(deposits.paymentId, payments.id))
      .leftJoin(refunds, eq(refunds.depositId, deposits.id))
      .where(
        and(
          eq(payments.id, sql.placeholder('paymentId')),
          eq(payments.businessId, sql.placeholder('businessId')),
          guarded
            ? proofHolds({ apiKeyId: sql`${sql.placeholder('apiKeyId')}`, keyVersion: sql`${sql.placeholder('keyVersion')}`, businessVersion: sql`${sql.placeholder('businessVersion')}` })
            : undefined,
        ),
      )
      .orderBy(deposits.receivedAt, deposits.id)
      .prepare(guarded ? 'kassa_payment_with_deposits_guarded' : 'kassa_payment_with_deposits'),
  );
const paymentWithDepositsQuery = { plain: paymentWithDeposits(false), guarded: paymentWithDeposits(true) };

export async function getPayment(deps: Deps, businessId: string, paymentId: string, proof?: CallerProof): Promise<PaymentRecord> {
  const { db } = deps.database;
  const rows = proof
    ? await paymentWithDepositsQuery.guarded(db).execute({ paymentId, businessId, ...proof })
    : await paymentWithDepositsQuery.plain(db).execute({ paymentId, businessId });
  if (!rows[0]) {
    await assertProofHolds(db, proof);
    throw notFound(`Payment ${paymentId} not found.`);
  }
  return recordsOf([rows[0].payment], collectDeposits(rows), deps.config.publicUrl)[0]!;
}

/** `getPayment` as the JSON text of the answer, from this process's read cache while the payment is unchanged. */
export function getPaymentJson(deps: Deps, businessId: string, paymentId: string, proof?: CallerProof): Promise<string> {
  return cachedPaymentJson(deps, businessId, paymentId, proof, () => getPayment(deps, businessId, paymentId, proof));
}

export type ListPaymentsQuery = { clientPaymentId?: string; status?: PaymentStatus; limit: number; cursor?: string };

export async function listPayments(
  deps: Deps,
  businessId: string | null,
  query: ListPaymentsQuery,
): Promise<{ items: PaymentRecord[]; nextCursor: string | null }> {
  const page = keyset(payments, query);
  return readSnapshot(deps, async (tx) => {
    const rows = await tx
      .select()
      .from(payments)
      .where(
        page.where(
          businessId ? eq(payments.businessId, businessId) : undefined,
          query.clientPaymentId ? eq(payments.clientPaymentId, query.clientPaymentId) : undefined,
          query.status ? eq(payments.status, query.status) : undefined,
        ),
      )
      .orderBy(...page.orderBy)
      .limit(page.limit);
    const { page: items, nextCursor } = page.page(rows);
    return { items: await paymentRecords(tx, items, deps.config.publicUrl), nextCursor };
  });
}

/** Any business's payment, for operators. */
export async function loadPaymentById(db: Queryable, paymentId: string): Promise<PaymentRow> {
  const row = await db.query.payments.findFirst({ where: eq(payments.id, paymentId.toLowerCase()) });
  if (!row) throw notFound(`Payment ${paymentId} not found.`);
  return row;
}

/**
 * Fix currency and network on a NEW (fiat-priced) payment: among the
 * business's allowed networks, price it (rates locked for FIXED), assign the
 * deposit address and move NEW → PENDING. Choosing the same pair again is a
 * no-op, so a double click in the checkout is harmless.
 */
export async function chooseCurrency(
  deps: Deps,
  paymentId: string,
  choice: { depositCurrency: string; network: string },
): Promise<PaymentRow> {
  const { depositCurrency, network } = choice;
  if (!isCrypto(depositCurrency) || !DEPOSIT_NETWORKS[depositCurrency].includes(network as Network)) {
    throw validationFailed([{ field: 'network', message: `${depositCurrency} cannot be deposited on ${network}` }]);
  }
  assertOffered(deps.networks, depositCurrency, network);
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx.select().from(payments).where(eq(payments.id, paymentId)).for('update');
    if (!row) throw notFound(`Payment ${paymentId} not found.`);
    if (row.status !== 'NEW') {
      if (row.depositCurrency === depositCurrency && row.network === network) return row;
      // No id in the message: the checkout shows it. One that expired (or was blocked) before any choice has no currency to name.
      const why = row.depositCurrency ? 'its currency is already fixed' : 'a currency can no longer be chosen';
      throw conflict('CURRENCY_ALREADY_CHOSEN', `This payment is ${row.status}; ${why}.`);
    }
    const business = await getBusiness(tx, row.businessId);
    if (!businessAllows(business, depositCurrency, network)) {
      throw unprocessable('NETWORK_NOT_ALLOWED', `This business does not accept ${depositCurrency} on ${network}.`);
    }
    const now = deps.now();
    const display = row.displayCurrency as FiatCurrency;
    const price = await priceInCrypto(
      deps.rates,
      { currency: display, amount: new Dec(row.expectedDisplayAmount!), fee: new Dec(row.expectedDisplayFee ?? 0) },
      depositCurrency,
      now,
    );
    assertAboveMinimum(depositCurrency, network as Network, price.expectedDepositAmount, 'depositCurrency');
    const locked = await valuationRates(deps.rates, depositCurrency, display, row.settlementCurrency as PricedCurrency, now);
    const [updated] = await tx
      .update(payments)
      .set({
        depositCurrency,
        network,
        expectedDepositAmount: price.expectedDepositAmount.toFixed(CRYPTO_DECIMALS[depositCurrency]),
        expectedDepositFee: price.expectedDepositFee.toFixed(CRYPTO_DECIMALS[depositCurrency]),
        ...lockedColumns(locked),
        ...(await pricingRate(deps, depositCurrency, display, now)),
        ...(await assignAddress(tx, deps, network as Network)),
        requestedAt: now,
      })
      .where(eq(payments.id, paymentId))
      .returning();
    await transitionPayment(tx, deps, updated!, 'PENDING', `currency chosen: ${depositCurrency} on ${network}`, now);
    return updated!;
  });
}
