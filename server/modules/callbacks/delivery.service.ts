/**
 * Durable callback delivery on graphile-worker, every
 * KASSA_CALLBACK_RETRY_INTERVAL_S for KASSA_CALLBACK_RETRY_WINDOW_S.
 *
 * graphile-worker's own retry backoff is exponential, so the delivery task
 * schedules itself: the delivery row and its first job are created in the
 * transaction that records the outcome; each attempt is logged, and on
 * failure the next job is added (keyed by delivery and attempt count) for first + n × interval in
 * the transaction that logs the attempt. A 2xx, or the end of the window,
 * ends it. A cron sweep re-adds overdue deliveries whose job was lost with
 * a killed worker.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import { executePrepared, preparedPerPool, type Queryable } from '../../../db/client.js';
import { businesses, callbackAttempts, callbackDeliveries, previousCallbackSecrets } from '../../../db/schema.js';
import { addJobSql, enqueue } from '../../../jobs/enqueue.js';
import type { CallbacksDeps as Deps } from './ports.js';
import { KassaError, notFound } from '../../platform/errors.js';
import { cachedSecret } from '../../platform/secret-cache.js';
import { callbackHeaders, newWebhookId } from './signing.js';

export type CallbackKind = 'WITHDRAWAL' | 'PAYMENT';

/**
 * One job key per delivery and attempt count: the job that makes attempt n + 1 is keyed with n, the
 * attempts logged when it was added. A retry is added while the job that logged the failure still
 * runs; with one key for both, graphile-worker's add_job finds that locked job, clears its key and
 * marks it spent before it inserts (three statements and an update of the running job), where a new
 * key is one insert. The key still makes the job unique for its delivery's current attempt count,
 * which is what the sweep looks for and re-adds.
 */
const jobKey = (deliveryId: string, attempts: number) => `deliver_callback:${deliveryId}:${attempts}`;
/**
 * A payment's status callbacks share one graphile-worker queue, so they run
 * one at a time in the order of the changes. A withdrawal has one callback,
 * so it needs no queue (a named queue costs graphile-worker 0.17 ~6× in
 * throughput, bench scenario 3).
 */
const queueOf = (kind: string, subjectId: string) => (kind === 'PAYMENT' ? `callbacks:${subjectId}` : undefined);

/** Create a delivery and its first job, in the caller's transaction. */
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
  await enqueue(tx, 'deliver_callback', { deliveryId: row!.id }, { runAt: at, jobKey: jobKey(row!.id, 0), maxAttempts: 3, queueName: queueOf(spec.kind, spec.subjectId) });
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

/** A delivery, its business's callback secret and the one a rotation replaced (encrypted), as a prepared query. */
const deliveryWithSecret = preparedPerPool((db) =>
  db
    .select({ delivery: callbackDeliveries, secret: businesses.callbackSecretEnc, previous: previousCallbackSecrets })
    .from(callbackDeliveries)
    .innerJoin(businesses, eq(businesses.id, callbackDeliveries.businessId))
    .leftJoin(previousCallbackSecrets, eq(previousCallbackSecrets.businessId, callbackDeliveries.businessId))
    .where(eq(callbackDeliveries.id, sql.placeholder('deliveryId')))
    .prepare('kassa_delivery_with_secret'),
);

/** One attempt (the `deliver_callback` task). */
export async function attemptDelivery(deps: Deps, deliveryId: string): Promise<AttemptOutcome> {
  const db = deps.database.db;
  const [found] = await deliveryWithSecret(db).execute({ deliveryId });
  if (!found || found.delivery.status !== 'PENDING') return 'SKIPPED';
  const { delivery } = found;
  const startedAt = deps.now();
  // During a rotation's overlap both secrets sign, so a receiver with either one verifies.
  const secrets = [found.secret, ...(found.previous && found.previous.expiresAt > startedAt ? [found.previous.secretEnc] : [])].map((s) =>
    cachedSecret(deps.masterKey, s),
  );
  const attempt = delivery.attempts + 1;
  const interval = deps.config.callbackRetryIntervalS;
  // The slot this attempt was scheduled for: next_attempt_at, which is first + n × interval, or a
  // later slot when nextAttemptAt skipped slots already past (then first + (attempt − 1) × interval
  // would charge this attempt with the lateness of the one before it).
  const plannedAt =
    delivery.nextAttemptAt ?? new Date(delivery.firstAttemptAt.getTime() + (attempt - delivery.cycleStartAttempt - 1) * interval * 1000);
  // A fresh timestamp (and so signature) per attempt; the webhook-id stays.
  const result = await deps.callbacks.post(delivery.url, delivery.body, callbackHeaders(secrets, delivery.webhookId, delivery.body, startedAt));
  const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const next = delivered ? null : nextAttemptAt(delivery.firstAttemptAt, attempt - delivery.cycleStartAttempt, deps.now(), interval, deps.config.callbackRetryWindowS);
  const outcome: AttemptOutcome = delivered ? 'DELIVERED' : next ? 'RETRY' : 'EXPIRED';
  const status = outcome === 'RETRY' ? 'PENDING' : outcome;

  // The whole outcome in one statement (atomic without BEGIN/COMMIT): a compare-and-set on the
  // attempt count claims the attempt (if another runner logged it, nothing happens), logs it, and
  // on RETRY adds the next job.
  const [row] = await executePrepared<{ claimed: number }>(deps.database, sql`
    with claimed as (
      update callback_deliveries
      set attempts = ${attempt}, status = ${status}, next_attempt_at = ${next?.toISOString() ?? null}::timestamptz,
        delivered_at = ${delivered ? deps.now().toISOString() : null}::timestamptz
      where id = ${deliveryId} and attempts = ${delivery.attempts} and status = 'PENDING'
      returning id
    ), logged as (
      insert into callback_attempts (delivery_id, attempt, started_at, planned_at, status_code, latency_ms, error)
      select id, ${attempt}, ${startedAt.toISOString()}::timestamptz, ${plannedAt.toISOString()}::timestamptz,
        ${result.statusCode}::int, ${result.latencyMs}::int, ${result.error}::text
      from claimed
    ), scheduled as (
      select ${addJobSql('deliver_callback', { deliveryId }, { runAt: next ?? undefined, jobKey: jobKey(deliveryId, attempt), maxAttempts: 3, queueName: queueOf(delivery.kind, delivery.subjectId) })}
      from claimed where ${outcome === 'RETRY'}
    )
    select (select count(*) from claimed)::int as claimed, (select count(*) from scheduled)::int as scheduled`);
  return row?.claimed ? outcome : 'SKIPPED';
}

/**
 * Re-add the job of every PENDING delivery that is overdue and has no live
 * job (its worker was killed: graphile-worker keeps such a job locked for
 * hours). Returns how many were re-added.
 */
export async function sweepCallbacks(deps: Deps): Promise<number> {
  const stale = Math.ceil(deps.config.callbackTimeoutMs / 1000) + 60;
  const overdue = await deps.database.db.execute(sql`
    select d.id, d.attempts from callback_deliveries d
    where d.status = 'PENDING' and d.next_attempt_at < ${new Date(deps.now().getTime() - 30_000).toISOString()}::timestamptz
      and not exists (
        -- A live job: attempts left, and neither it nor its queue held by a lock older than any
        -- attempt can take. (A worker killed with a batch in hand leaves those jobs' queues locked
        -- for hours, and an unlocked payment callback job waiting in such a queue would never run.)
        select 1 from graphile_worker._private_jobs j
        left join graphile_worker._private_job_queues q on q.id = j.job_queue_id
        where j.key = 'deliver_callback:' || d.id || ':' || d.attempts
          and j.attempts < j.max_attempts
          and (j.locked_at is null or j.locked_at > now() - make_interval(secs => ${stale}))
          and (q.locked_at is null or q.locked_at > now() - make_interval(secs => ${stale}))
      )
    limit 1000`);
  const rows = overdue as unknown as { id: string; attempts: number }[];
  // Outside the subject's queue: a killed worker leaves that queue locked for hours. The same key as a
  // dead worker's locked job: add_job clears that job's key and marks it spent, so it never runs again.
  for (const { id, attempts } of rows) {
    await enqueue(deps.database.db, 'deliver_callback', { deliveryId: id }, { jobKey: jobKey(id, attempts), maxAttempts: 3 });
  }
  return rows.length;
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
      .set({ status: 'PENDING', firstAttemptAt: now, nextAttemptAt: now, cycleStartAttempt: d.attempts, deliveredAt: null })
      .where(eq(callbackDeliveries.id, deliveryId));
    await enqueue(tx, 'deliver_callback', { deliveryId }, { runAt: now, jobKey: jobKey(deliveryId, d.attempts), maxAttempts: 3, queueName: queueOf(d.kind, d.subjectId) });
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
  return rows.map(({ body, ...rest }) => ({ ...rest, body: JSON.parse(body) as unknown }));
}

export async function listAttempts(db: Queryable, deliveryId: string) {
  return db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, deliveryId)).orderBy(callbackAttempts.attempt);
}

