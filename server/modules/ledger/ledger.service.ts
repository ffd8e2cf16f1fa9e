/**
 * The ledger: append-only entries, and running balances updated in the same
 * transaction. A balance is always the sum of its entries; the CHECK on
 * `balances.amount >= 0` makes an overdraft fail the whole transaction.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { balances, ledgerEntries, withdrawals } from '../../../db/schema.js';

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

/** Withdrawal states whose debit is booked but whose outcome is not: `pending` of GET /v1/balances. */
const IN_FLIGHT_WITHDRAWALS = ['PENDING_APPROVAL', 'PROCESSING'];

export type CurrencyBalance = { currency: string; available: string; pending: string };

/**
 * A business's balances per settlement currency (CONTRACT §4 `GET /v1/balances`,
 * CLI `balances`): `available` is the MERCHANT ledger balance; `pending` the
 * withdrawals accepted and not yet final, already out of `available`. Exact
 * decimal strings as the database holds them (no rounding: they equal the ledger).
 */
export async function ledgerBalances(db: Queryable, businessId: string): Promise<CurrencyBalance[]> {
  const rows = (await db.execute(sql`
    with available as (
      select currency, amount from ${balances} where business_id = ${businessId} and account = 'MERCHANT'
    ), pending as (
      select settlement_currency as currency, sum(deducted_settlement_amount) as amount from ${withdrawals}
      where business_id = ${businessId} and status in ${sql.raw(`('${IN_FLIGHT_WITHDRAWALS.join("','")}')`)}
      group by settlement_currency
    )
    select coalesce(a.currency, p.currency) as currency,
      coalesce(a.amount, 0)::text as available, coalesce(p.amount, 0)::text as pending
    from available a full join pending p on p.currency = a.currency
    order by 1`)) as unknown as CurrencyBalance[];
  return rows.map((r) => ({ currency: r.currency, available: plainDecimal(r.available), pending: plainDecimal(r.pending) }));
}

/** PostgreSQL numeric text without trailing zeros ("12.500" → "12.5", "0.00" → "0"). */
function plainDecimal(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
