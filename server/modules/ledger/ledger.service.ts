/**
 * The ledger: append-only entries, and running balances updated in the same
 * transaction. A balance is always the sum of its entries; the CHECK on
 * `balances.amount >= 0` makes an overdraft fail the whole transaction.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { balances, ledgerEntries } from '../../../db/schema.js';

export type Account = 'MERCHANT' | 'FEES';

export type Entry = {
  businessId: string;
  account: Account;
  currency: string;
  /** Signed decimal string. */
  amount: string;
  kind: string;
  depositId?: string;
  withdrawalId?: string;
};

export async function postEntries(tx: Queryable, entries: Entry[], at: Date): Promise<void> {
  const nonZero = entries.filter((e) => !/^-?0(\.0+)?$/.test(e.amount));
  if (nonZero.length === 0) return;
  await tx.insert(ledgerEntries).values(nonZero.map((e) => ({ ...e, at })));
  for (const e of nonZero) {
    if (e.amount.startsWith('-')) {
      // A debit updates the existing row (locking it until commit); the CHECK refuses a negative result.
      const updated = await tx
        .update(balances)
        .set({ amount: sql`${balances.amount} + ${e.amount}::numeric` })
        .where(and(eq(balances.businessId, e.businessId), eq(balances.account, e.account), eq(balances.currency, e.currency)))
        .returning({ amount: balances.amount });
      if (updated.length === 0) throw new InsufficientBalanceError(e.currency);
    } else {
      await tx
        .insert(balances)
        .values({ businessId: e.businessId, account: e.account, currency: e.currency, amount: e.amount })
        .onConflictDoUpdate({
          target: [balances.businessId, balances.account, balances.currency],
          set: { amount: sql`${balances.amount} + excluded.amount` },
        });
    }
  }
}

/** A debit larger than the balance: the CHECK constraint's verdict, or no balance at all. */
export class InsufficientBalanceError extends Error {
  override name = 'InsufficientBalanceError';
  constructor(readonly currency: string) {
    super(`insufficient ${currency} balance`);
  }
}

export function isInsufficientBalance(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string } };
  return error instanceof InsufficientBalanceError || e.code === '23514' || e.cause?.code === '23514';
}

export type Balance = { account: string; currency: string; amount: string };

export async function getBalances(db: Queryable, businessId: string): Promise<Balance[]> {
  return db
    .select({ account: balances.account, currency: balances.currency, amount: balances.amount })
    .from(balances)
    .where(eq(balances.businessId, businessId))
    .orderBy(balances.account, balances.currency);
}

/** Sum of entries per (account, currency): what the balances must equal. */
export async function sumEntries(db: Queryable, businessId: string): Promise<Balance[]> {
  return db
    .select({ account: ledgerEntries.account, currency: ledgerEntries.currency, amount: sql<string>`sum(${ledgerEntries.amount})::text` })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.businessId, businessId)))
    .groupBy(ledgerEntries.account, ledgerEntries.currency)
    .orderBy(ledgerEntries.account, ledgerEntries.currency);
}

