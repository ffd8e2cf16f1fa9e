/** Reading a payment's deposits and their refunds, for the API records. */
import { eq, inArray } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { deposits, refunds } from '../../../db/schema.js';
import type { DepositRow } from './deposit-record.rules.js';

/** Deposits and their refunds for a set of payments, for the API records. */
export type LoadedDeposits = { deposits: DepositRow[]; refunds: Map<string, typeof refunds.$inferSelect> };

export async function loadDeposits(db: Queryable, paymentIds: string[]): Promise<LoadedDeposits> {
  if (paymentIds.length === 0) return { deposits: [], refunds: new Map() };
  // A deposit has at most one refund: one query, one row a deposit.
  const rows = await db
    .select({ deposit: deposits, refund: refunds })
    .from(deposits)
    .leftJoin(refunds, eq(refunds.depositId, deposits.id))
    .where(inArray(deposits.paymentId, paymentIds))
    .orderBy(deposits.receivedAt, deposits.id);
  return collectDeposits(rows);
}

/** Deposits (in order) and refunds by deposit, from rows of deposits left-joined with refunds. */
export function collectDeposits(rows: { deposit: DepositRow | null; refund: typeof refunds.$inferSelect | null }[]): LoadedDeposits {
  const loaded: LoadedDeposits = { deposits: [], refunds: new Map() };
  for (const { deposit, refund } of rows) {
    if (!deposit) continue;
    loaded.deposits.push(deposit);
    if (refund) loaded.refunds.set(deposit.id, refund);
  }
  return loaded;
}
