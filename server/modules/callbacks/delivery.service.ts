/**
 * Durable callback delivery: every KASSA_CALLBACK_RETRY_INTERVAL_S for
 * KASSA_CALLBACK_RETRY_WINDOW_S, counted from the first attempt.
 *
 * The delivery row is the whole schedule: it is written in the transaction
 * that records the change it reports (`enqueueCallback`), PENDING with its
 * next_attempt_at. The worker's dispatcher (dispatcher.ts) claims due rows
 * in batches with a lease (`claimDue`), POSTs each and writes the outcomes of
 * the same moment in one statement (`recordOutcome`): each attempt logged, and the delivery
 * DELIVERED, EXPIRED, or PENDING again at its next slot. No job is added per
 * attempt, so a retry costs one UPDATE, and a dead worker loses nothing: its
 * lease runs out and another dispatcher claims the row.
 *
 * Why not a graphile-worker job per attempt, as before: graphile-worker
 * fetches jobs whose named queue is free by locking every free queue row, and
 * a payment's callbacks had their own queue. With 10,000 payment callbacks
 * waiting for a retry (one merchant's endpoint down), each job fetch of the
 * worker, for every task, took ~10 ms (measured), where the dispatcher's
 * claim reads the due index and the subject index.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import { answered, executePrepared, preparedPerPool, type Database, type Queryable } from '../../../db/client.js';
import { batched } from '../../platform/batch.js';
import { callbackAttempts, callbackDeliveries } from '../../../db/schema.js';
import type { CallbacksDeps as Deps, PostResult } from './ports.js';
import { KassaError, notFound } from '../../platform/errors.js';
import { cachedSecret } from '../../platform/secret-cache.js';
import { callbackHeaders } from './signing.js';
import { randomToken } from '../../platform/secrets.js';

/** A message id: stable across every retry of one callback. */
export function newWebhookId(): string {
  return randomToken('msg_', 16);
}

export type CallbackKind = 'WITHDRAWAL' | 'PAYMENT';

/** The NOTIFY channel that wakes the dispatchers: a new delivery (a trigger, at commit) or a redelivery. */
export const CALLBACK_DUE_CHANNEL = 'kassa_callback_due';

/** Create a delivery, due at `at`, in the caller's transaction (its INSERT trigger wakes the dispatchers at commit). */
export async function enqueueCallback(
  tx: Queryable,
  spec: { businessId: string; kind: CallbackKind; subjectId: string; url: string; body: Record<string, unknown> },
  at: Date,
): Promise<string> {
  const [row] = await tx
    .insert(callbackDeliveries)
    .values({
      businessId: spec.businessId,
      kind: spec.kind,
      subjectId: spec.subjectId,
      webhookId: newWebhookId(),
      url: spec.url,
      body: JSON.stringify(spec.body),
      status: 'PENDING',
      firstAttemptAt: at,
      nextAttemptAt: at,
      createdAt: at,
    })
    .returning({ id: callbackDeliveries.id });
  return row!.id;
}

/**
 * The slot of the next attempt after `attemptsInCycle` attempts: first + n ×
 * interval, skipping slots already past (a late worker does not burst).
 * Null when it would start after the window.
 */
export function nextAttemptAt(first: Date, attemptsInCycle: number, now: Date, intervalS: number, windowS: number): Date | null {
  const interval = intervalS * 1000;
  const behind = Math.ceil((now.getTime() - first.getTime()) / interval);
  const n = Math.max(attemptsInCycle, behind);
  const next = new Date(first.getTime() + n * interval);
  return next.getTime() - first.getTime() > windowS * 1000 ? null : next;
}

export type AttemptOutcome = 'DELIVERED' | 'RETRY' | 'EXPIRED' | 'SKIPPED';

/** A claimed delivery with what signing it needs (the sealed secrets). */
export type ClaimedDelivery = {
  id: string;
  webhookId: string;
  url: string;
  body: string;
  attempts: number;
  cycleStartAttempt: number;
  firstAttemptAt: Date;
  nextAttemptAt: Date | null;
  secret: string;
  previousSecret: string | null;
  previousExpiresAt: Date | null;
};

/**
 * How long a claim holds a delivery: the longest a POST may take, and a minute for the outcome's
 * write. A dispatcher that died holding it is replaced once it runs out.
 */
export const leaseMs = (deps: Deps) => deps.config.callbackTimeoutMs + 60_000;

/**
 * Claim up to `limit` due deliveries (one statement): PENDING, due, not held by a live lease,
 * and not behind an earlier delivery of the same subject that is due or being attempted, so a
 * payment's callbacks go one at a time and their first attempts in the order of its changes (an
 * earlier one waiting for its retry slot does not hold the later ones back). SKIP LOCKED lets
 * dispatchers in several processes claim side by side. `only` claims that one delivery if it is
 * free, due or not (an operator's or a test's attempt now).
 */
export async function claimDue(deps: Deps, limit: number, only?: string): Promise<ClaimedDelivery[]> {
  const now = deps.now();
  const at = sql`${now.toISOString()}::timestamptz`;
  const until = new Date(now.getTime() + leaseMs(deps));
  const rows = await executePrepared<Record<string, unknown>>(deps.database, sql`
    with due as (
      select d.id from callback_deliveries d
      where d.status = 'PENDING'
        and ${only === undefined ? sql`d.next_attempt_at <= ${at}` : sql`d.id = ${only}::uuid`}
        and (d.locked_until is null or d.locked_until <= ${at})
        and not exists (
          select 1 from callback_deliveries e
          where e.subject_id = d.subject_id and e.status = 'PENDING' and e.seq < d.seq
            and (e.next_attempt_at <= ${at} or e.locked_until > ${at})
        )
      order by d.next_attempt_at
      limit ${limit}::int
      for update of d skip locked
    ), claimed as (
      update callback_deliveries d set locked_until = ${until.toISOString()}::timestamptz
      from due where d.id = due.id
      returning d.id, d.business_id, d.webhook_id, d.url, d.body, d.attempts, d.cycle_start_attempt,
        d.first_attempt_at, d.next_attempt_at
    )
    select c.id, c.webhook_id, c.url, c.body, c.attempts, c.cycle_start_attempt,
      c.first_attempt_at, c.next_attempt_at, b.callback_secret_enc as secret, p.secret_enc as previous_secret, p.expires_at as previous_expires_at
    from claimed c join businesses b on b.id = c.business_id
    left join previous_callback_secrets p on p.business_id = c.business_id`);
  return rows.map((r) => ({
    id: r.id as string,
    webhookId: r.webhook_id as string,
    url: r.url as string,
    body: r.body as string,
    attempts: r.attempts as number,
    cycleStartAttempt: r.cycle_start_attempt as number,
    firstAttemptAt: new Date(r.first_attempt_at as string),
    nextAttemptAt: r.next_attempt_at === null ? null : new Date(r.next_attempt_at as string),
    secret: r.secret as string,
    // Null when the business has no previous secret (the left join).
    previousSecret: r.previous_secret as string | null,
    previousExpiresAt: r.previous_expires_at === null ? null : new Date(r.previous_expires_at as string),
  }));
}

/** POST a claimed delivery once and record the outcome. */
export async function attemptClaimed(deps: Deps, delivery: ClaimedDelivery): Promise<AttemptOutcome> {
  const startedAt = deps.now();
  // During a rotation's overlap both secrets sign, so a receiver with either one verifies.
  const sealed = [delivery.secret, ...(delivery.previousSecret && delivery.previousExpiresAt && delivery.previousExpiresAt > startedAt ? [delivery.previousSecret] : [])];
  const secrets = sealed.map((s) => cachedSecret(deps.masterKey, s));
  // A fresh timestamp (and so signature) per attempt; the webhook-id stays.
  const result = await deps.callbacks.post(delivery.url, delivery.body, callbackHeaders(secrets, delivery.webhookId, delivery.body, startedAt));
  return recordOutcome(deps, delivery, startedAt, result);
}

/** One attempt's outcome as the batched statement takes it: every value as text (see OUTCOMES). */
type OutcomeRow = {
  id: string; prevAttempts: number; attempt: number; status: string; nextAt: string | null; deliveredAt: string | null;
  startedAt: string; plannedAt: string; statusCode: number | null; latencyMs: number | null; error: string | null;
};

/**
 * Outcomes of several attempts in one statement (atomic without BEGIN/COMMIT): for each, a
 * compare-and-set on the attempt count (if another dispatcher logged this attempt, nothing
 * happens to that one), the attempt logged, the lease released, and the delivery DELIVERED,
 * EXPIRED, or PENDING at its next slot. Every array is text[] and cast here: postgres.js types an
 * array parameter by its first element.
 */
const OUTCOMES = `
  with v as (
    select v.id::uuid as id, v.prev_attempts::int as prev_attempts, v.attempt::int as attempt, v.status,
      v.next_at::timestamptz as next_at, v.delivered_at::timestamptz as delivered_at, v.started_at::timestamptz as started_at,
      v.planned_at::timestamptz as planned_at, v.status_code::int as status_code, v.latency_ms::int as latency_ms, v.error
    from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
      as v(id, prev_attempts, attempt, status, next_at, delivered_at, started_at, planned_at, status_code, latency_ms, error)
  ), claimed as (
    update callback_deliveries d
    set attempts = v.attempt, status = v.status, next_attempt_at = v.next_at, delivered_at = v.delivered_at, locked_until = null
    from v where d.id = v.id and d.attempts = v.prev_attempts and d.status = 'PENDING'
    returning d.id
  ), logged as (
    insert into callback_attempts (delivery_id, attempt, started_at, planned_at, status_code, latency_ms, error)
    select v.id, v.attempt, v.started_at, v.planned_at, v.status_code, v.latency_ms, v.error from v join claimed c on c.id = v.id
  )
  select id from claimed`;

const text = (value: string | number | null) => (value === null ? null : String(value));

/**
 * Each pool's batcher of outcomes: the outcomes that arrive in the same turn of the event loop
 * share a statement (up to 32; while 2 batches are at the database the next one gathers).
 */
const outcomeBatch = preparedPerPool((database: Database) =>
  batched<OutcomeRow, boolean>(async (items) => {
    // One delivery twice in a batch (two holders of one process racing) would be updated once and
    // reported written twice (its attempt logged twice, which the unique attempt index refuses):
    // refused here without a round trip, so `batched` runs them one at a time.
    if (new Set(items.map((item) => item.id)).size !== items.length) throw new Error('a delivery twice in one batch of outcomes');
    const ordered = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const columns: (keyof OutcomeRow)[] = ['id', 'prevAttempts', 'attempt', 'status', 'nextAt', 'deliveredAt', 'startedAt', 'plannedAt', 'statusCode', 'latencyMs', 'error'];
    const params = columns.map((column) => ordered.map((item) => text(item[column])));
    const written = await answered(database.sql.unsafe<{ id: string }[]>(OUTCOMES, params as never[], { prepare: true }));
    const ids = new Set(written.map((row) => row.id));
    return items.map((item) => ids.has(item.id));
  }, { maxSize: 32, maxInFlight: 2, name: 'callback_outcome' }),
);

/** The outcome of one attempt (batched with those of the same moment, see OUTCOMES). */
async function recordOutcome(deps: Deps, delivery: ClaimedDelivery, startedAt: Date, result: PostResult): Promise<AttemptOutcome> {
  const attempt = delivery.attempts + 1;
  const interval = deps.config.callbackRetryIntervalS;
  // The slot this attempt was scheduled for: next_attempt_at, which is first + n × interval, or a
  // later slot when nextAttemptAt skipped slots already past (then first + (attempt − 1) × interval
  // would charge this attempt with the lateness of the one before it).
  const plannedAt =
    delivery.nextAttemptAt ?? new Date(delivery.firstAttemptAt.getTime() + (attempt - delivery.cycleStartAttempt - 1) * interval * 1000);
  const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const next = delivered ? null : nextAttemptAt(delivery.firstAttemptAt, attempt - delivery.cycleStartAttempt, deps.now(), interval, deps.config.callbackRetryWindowS);
  const outcome: AttemptOutcome = delivered ? 'DELIVERED' : next ? 'RETRY' : 'EXPIRED';
  const written = await outcomeBatch(deps.database)({
    id: delivery.id,
    prevAttempts: delivery.attempts,
    attempt,
    status: outcome === 'RETRY' ? 'PENDING' : outcome,
    nextAt: next?.toISOString() ?? null,
    deliveredAt: delivered ? deps.now().toISOString() : null,
    startedAt: startedAt.toISOString(),
    plannedAt: plannedAt.toISOString(),
    statusCode: result.statusCode,
    latencyMs: result.latencyMs,
    error: result.error,
  });
  return written ? outcome : 'SKIPPED';
}

/**
 * One attempt of one delivery now, due or not (an operator's tool, tests): SKIPPED when it is
 * not PENDING, is held by another dispatcher, or waits behind an earlier callback of its subject.
 */
export async function attemptDelivery(deps: Deps, deliveryId: string): Promise<AttemptOutcome> {
  const [claimed] = await claimDue(deps, 1, deliveryId);
  return claimed ? attemptClaimed(deps, claimed) : 'SKIPPED';
}

/**
 * When the next delivery not held by a lease falls due (null when none waits): the dispatcher
 * sleeps until then. Read in due order from the due index, so a backlog planned for later costs
 * one row.
 */
export async function nextDueAt(deps: Deps): Promise<Date | null> {
  const [row] = await executePrepared<{ at: string }>(
    deps.database,
    sql`select next_attempt_at as at from callback_deliveries
      where status = 'PENDING' and (locked_until is null or locked_until <= ${deps.now().toISOString()}::timestamptz)
      order by next_attempt_at limit 1`,
  );
  return row ? new Date(row.at) : null;
}

/**
 * Rows changed since the last ANALYZE above which a dispatcher analyzes `callback_deliveries`
 * itself. On statistics from before a burst (autovacuum looks once a minute), the claim planned a
 * bitmap scan, an anti-join and a sort of every due row: 4 ms for a claim with 2,000 due, against
 * 0.3 ms on fresh statistics (EXPLAIN ANALYZE, round 7).
 */
export const STALE_STATISTICS_ROWS = 5_000;

/**
 * ANALYZE `callback_deliveries` when more than STALE_STATISTICS_ROWS rows changed since its last
 * analyze; true when it did. Only a database user that owns the table (or is a member of its
 * owner) may analyze it; any other leaves it to autovacuum, as before.
 */
export async function refreshStaleStatistics(deps: Deps): Promise<boolean> {
  const [row] = await deps.database.sql<{ changed: string | null }[]>`
    select s.n_mod_since_analyze as changed from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.relid = 'callback_deliveries'::regclass and pg_has_role(c.relowner, 'USAGE')`;
  if (!row || Number(row.changed ?? 0) < STALE_STATISTICS_ROWS) return false;
  await deps.database.sql`analyze callback_deliveries`;
  return true;
}

/** Give back claims that were not attempted (a stopping dispatcher), for another to take at once. */
export async function releaseClaims(deps: Deps, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await deps.database.sql`update callback_deliveries set locked_until = null where id = any(${ids}::uuid[]) and status = 'PENDING'`;
}

/** An operator's redelivery: a new schedule from now, same webhook-id and body. */
export async function redeliver(deps: Deps, deliveryId: string): Promise<void> {
  await deps.database.db.transaction(async (tx) => {
    const [d] = await tx.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, deliveryId)).for('update');
    if (!d) throw notFound(`Callback delivery ${deliveryId} not found.`);
    if (d.status === 'PENDING') throw new KassaError(409, 'DELIVERY_IN_PROGRESS', `Callback delivery ${deliveryId} is still being retried.`);
    const now = deps.now();
    await tx
      .update(callbackDeliveries)
      .set({ status: 'PENDING', firstAttemptAt: now, nextAttemptAt: now, cycleStartAttempt: d.attempts, deliveredAt: null, lockedUntil: null })
      .where(eq(callbackDeliveries.id, deliveryId));
    await tx.execute(sql`select pg_notify(${CALLBACK_DUE_CHANNEL}, '')`);
  });
}

export async function listDeliveries(db: Queryable, filter: { businessId?: string; subjectId?: string; status?: string; limit: number }) {
  const rows = await db
    .select()
    .from(callbackDeliveries)
    .where(
      and(
        filter.businessId ? eq(callbackDeliveries.businessId, filter.businessId) : undefined,
        filter.subjectId ? eq(callbackDeliveries.subjectId, filter.subjectId) : undefined,
        filter.status ? eq(callbackDeliveries.status, filter.status) : undefined,
      ),
    )
    .orderBy(desc(callbackDeliveries.createdAt))
    .limit(filter.limit);
  // The claim's bookkeeping (order, lease) is the dispatcher's, not part of the record.
  return rows.map(({ body, seq: _seq, lockedUntil: _lease, ...rest }) => ({ ...rest, body: JSON.parse(body) as unknown }));
}

export async function listAttempts(db: Queryable, deliveryId: string) {
  return db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, deliveryId)).orderBy(callbackAttempts.attempt);
}

