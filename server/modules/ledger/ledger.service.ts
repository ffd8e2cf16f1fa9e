/**
 * The ledger: append-only entries, and running balances updated in the same
 * transaction. A balance is always the sum of its entries. A debit that would
 * overdraw fails the whole transaction, except a reversal (`mayOverdraw`):
 * the chain took a credit back, and the merchant may then owe it.
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
  /** Only a reversal of a credit the chain took back: it is posted even when the balance cannot cover it. */
  mayOverdraw?: boolean;
};

export async function postEntries(tx: Queryable, entries: Entry[], at: Date): Promise<void> {
  const nonZero = entries.filter((e) => !/^-?0(\.0+)?$/.test(e.amount));
  if (nonZero.length === 0) return;
  await tx.insert(ledgerEntries).values(nonZero.map(({ mayOverdraw: _, ...e }) => ({ ...e, at })));
  // Balance rows are locked in one order (business, account, currency) whatever the caller's order,
  // so that two transactions posting to the same rows (a credit, a reversal) never deadlock.
  const key = (e: Entry) => `${e.businessId}\u0000${e.account}\u0000${e.currency}`;
  for (const e of [...nonZero].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))) {
    if (e.amount.startsWith('-')) {
      // A debit updates the existing row, locking it until commit. Under READ COMMITTED a concurrent
      // debit waits for that lock and PostgreSQL re-checks this WHERE on the row it committed, so two
      // withdrawals can never both pass on one balance.
      const row = and(eq(balances.businessId, e.businessId), eq(balances.account, e.account), eq(balances.currency, e.currency));
      const covered = sql`${balances.amount} + ${e.amount}::numeric >= 0`;
      const updated = await tx
        .update(balances)
        .set({ amount: sql`${balances.amount} + ${e.amount}::numeric` })
        .where(e.mayOverdraw ? row : and(row, covered))
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

const REVERSAL_KIND: Record<Account, string> = { MERCHANT: 'DEPOSIT_REVERSAL', FEES: 'SERVICE_FEE_REVERSAL' };

/**
 * The entries that take back all the ledger holds for a deposit, one per account and currency:
 * the reversal of a credit the chain took back (CONTRACT §10), posted even when the balance
 * cannot cover it. Once posted, the deposit holds nothing, so a second call returns none.
 */
export async function depositReversal(tx: Queryable, depositId: string): Promise<Entry[]> {
  const held = await tx
    .select({
      businessId: ledgerEntries.businessId,
      account: ledgerEntries.account,
      currency: ledgerEntries.currency,
      amount: sql<string>`(-sum(${ledgerEntries.amount}))::text`,
    })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.depositId, depositId))
    .groupBy(ledgerEntries.businessId, ledgerEntries.account, ledgerEntries.currency)
    .orderBy(ledgerEntries.account, ledgerEntries.currency);
  return held.map((h) => {
    const account = h.account as Account;
    return { ...h, account, kind: REVERSAL_KIND[account], depositId, mayOverdraw: true };
  });
}

/** A debit larger than the balance, or no balance at all. */
export class InsufficientBalanceError extends Error {
  override name = 'InsufficientBalanceError';
  constructor(readonly currency: string) {
    super(`insufficient ${currency} balance`);
  }
}

export function isInsufficientBalance(error: unknown): boolean {
  return error instanceof InsufficientBalanceError;
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

