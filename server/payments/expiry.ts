/**
 * Expiry of ONE_TIME payments: run by the `expire_payment` job that the
 * creating transaction enqueued for `expiresAt`. The payment's status is
 * recomputed from its deposits at that time: an open payment not covered
 * expires, unless a deposit is still unconfirmed or in review (it then
 * expires, or not, when that deposit resolves). A late or repeated job is
 * harmless.
 */
import { eq, sql } from 'drizzle-orm';
import { payments } from '../../db/schema.js';
import type { Deps } from '../deps.js';
import type { PaymentStatus } from '../money/catalog.js';
import { reevaluatePayment } from './deposit-service.js';

export async function expirePayment(deps: Deps, paymentId: string): Promise<PaymentStatus | 'MISSING' | 'NOT_DUE'> {
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx.select().from(payments).where(eq(payments.id, paymentId)).for('update');
    if (!row) return 'MISSING';
    const now = deps.now();
    if (!row.expiresAt || now < row.expiresAt) return 'NOT_DUE';
    return reevaluatePayment(tx, deps, row, now, 'expired');
  });
}

/** Open ONE_TIME payments past their expiry: the safety sweep's input, should a job ever be lost. */
export async function overduePaymentIds(deps: Deps, limit = 500): Promise<string[]> {
  const rows = await deps.database.db.execute(sql`
    select id from payments
    where type = 'ONE_TIME' and status in ('NEW', 'PENDING', 'AWAITING', 'UNPROCESSABLE', 'FAILED')
      and expires_at <= ${deps.now().toISOString()}::timestamptz
      and not exists (select 1 from deposits d where d.payment_id = payments.id and d.status in ('UNCONFIRMED', 'COMPLIANCE_REVIEW'))
    order by expires_at limit ${limit}`);
  return (rows as unknown as { id: string }[]).map((r) => r.id);
}
