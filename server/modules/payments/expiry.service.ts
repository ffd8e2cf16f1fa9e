/**
 * Expiry of ONE_TIME payments. The moment is durable from the start: it is
 * `expiresAt` on the payment row, committed by the creating INSERT. Every
 * minute (and once when a worker starts), `scheduleExpiries` gives each
 * open payment that expires within the next EXPIRY_LOOKAHEAD_MS, or is
 * overdue, an `expire_payment` job due exactly at its expiry (one per
 * payment: the job key). So a payment expires on time without its creation
 * enqueueing anything: `graphile_worker.add_job` there NOTIFYs every worker,
 * which halved the create rate (README, Performance), for a job up to 7 days
 * out.
 *
 * The job recomputes the payment's status from its deposits at that time: an
 * open payment not covered expires, unless a deposit is still unconfirmed or
 * in review (it then expires, or not, when that deposit resolves). A late or
 * repeated job is harmless.
 */
import { eq, sql } from 'drizzle-orm';
import { payments } from '../../../db/schema.js';
import { addJobSql } from '../../../jobs/enqueue.js';
import type { PaymentsDeps as Deps } from './ports.js';
import type { PaymentStatus } from '../money/index.js';
import { EXPIRABLE_PAYMENT_STATUSES } from './payment-states.rules.js';
import { PENDING_DEPOSIT } from './payment-status.rules.js';
import { reevaluatePayment } from './payment-reevaluation.js';

/** Twice the scheduling period: a run that is late by up to a minute still schedules every job in time. */
export const EXPIRY_LOOKAHEAD_MS = 2 * 60_000;

export async function expirePayment(deps: Deps, paymentId: string): Promise<PaymentStatus | 'MISSING' | 'NOT_DUE'> {
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx.select().from(payments).where(eq(payments.id, paymentId)).for('update');
    if (!row) return 'MISSING';
    const now = deps.now();
    if (!row.expiresAt || now < row.expiresAt) return 'NOT_DUE';
    return reevaluatePayment(tx, deps, row, now, 'expired');
  });
}

/** A job locked longer than this belongs to a worker that died (graphile-worker keeps its lock for hours). */
const STALE_LOCK = '5 minutes';
/** Status constants as SQL literals: the expirable ones must be literals to match the partial index `payments_expirable`. */
const literals = (statuses: readonly string[]) => sql.raw(statuses.map((s) => `'${s}'`).join(', '));
const EXPIRABLE = literals(EXPIRABLE_PAYMENT_STATUSES);
const PENDING = literals(PENDING_DEPOSIT);

/**
 * Give every open ONE_TIME payment expiring by now + `lookaheadMs` its
 * exact-time `expire_payment` job, unless it has a live one (a job whose
 * worker died, or that used up its attempts, does not count: add_job then
 * replaces it). An overdue payment whose deposit is still in flight is left
 * to that deposit's resolution. Batches of `batch` until none is left (at
 * most `maxBatches` a run). Returns how many jobs it added.
 */
export async function scheduleExpiries(deps: Deps, lookaheadMs = EXPIRY_LOOKAHEAD_MS, batch = 5000, maxBatches = 100): Promise<number> {
  const now = deps.now();
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const [row] = (await deps.database.db.execute(sql`
      select count(${addJobSql('expire_payment', sql`json_build_object('paymentId', p.id)`, {
        runAt: sql`p.expires_at`,
        jobKey: sql`'expire_payment:' || p.id`,
      })})::int as added
      from (
        select id, expires_at from payments
        where type = 'ONE_TIME' and status in (${EXPIRABLE})
          and expires_at <= ${new Date(now.getTime() + lookaheadMs).toISOString()}::timestamptz
          and (expires_at > ${now.toISOString()}::timestamptz or not exists (
            select 1 from deposits d where d.payment_id = payments.id and d.status in (${PENDING})))
          and not exists (
            select 1 from graphile_worker.jobs j
            where j.key = 'expire_payment:' || payments.id and j.attempts < j.max_attempts
              and (j.locked_at is null or j.locked_at > now() - interval '${sql.raw(STALE_LOCK)}'))
        order by expires_at limit ${batch}
      ) p`)) as unknown as [{ added: number }];
    total += row.added;
    if (row.added < batch) break;
  }
  return total;
}
