/**
 * Expiry of ONE_TIME payments: run by the `expire_payment` job that the
 * creating transaction enqueued for `expiresAt`. Only a payment still open
 * (NEW, PENDING, AWAITING) expires; anything else is left alone, so a late or
 * repeated job is harmless.
 */
import { eq, sql } from 'drizzle-orm';
import { payments } from '../../db/schema.js';
import type { Deps } from '../deps.js';
import type { PaymentStatus } from '../money/catalog.js';
import { transitionPayment } from './transition.js';

const OPEN: readonly PaymentStatus[] = ['NEW', 'PENDING', 'AWAITING'];

export type ExpiryOutcome = 'EXPIRED' | 'NOT_DUE' | 'NOT_OPEN' | 'MISSING';

export async function expirePayment(deps: Deps, paymentId: string): Promise<ExpiryOutcome> {
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx.select().from(payments).where(eq(payments.id, paymentId)).for('update');
    if (!row) return 'MISSING';
    if (row.type !== 'ONE_TIME' || !row.expiresAt || !OPEN.includes(row.status as PaymentStatus)) return 'NOT_OPEN';
    const now = deps.now();
    if (now < row.expiresAt) return 'NOT_DUE';
    await transitionPayment(tx, row, 'EXPIRED', 'expired', now, { expiresAt: row.expiresAt.toISOString() });
    return 'EXPIRED';
  });
}

/** Open ONE_TIME payments past their expiry: the safety sweep's input, should a job ever be lost. */
export async function overduePaymentIds(deps: Deps, limit = 500): Promise<string[]> {
  const rows = await deps.database.db.execute(sql`
    select id from payments
    where type = 'ONE_TIME' and status in ('NEW', 'PENDING', 'AWAITING') and expires_at <= ${deps.now().toISOString()}::timestamptz
    order by expires_at limit ${limit}`);
  return (rows as unknown as { id: string }[]).map((r) => r.id);
}
