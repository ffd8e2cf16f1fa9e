/**
 * A business's balances per settlement currency (GET /v1/balances, the
 * operators' tRPC and CLI): `available` is the ledger's MERCHANT balance,
 * `pending` the sum debited for withdrawals not yet final. Both are read in
 * one snapshot, so a withdrawal moving between them is never counted twice.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../../db/client.js';
import { withdrawals } from '../../../db/schema.js';
import { getBalances } from '../ledger/index.js';
import { Dec, decimalsOf, isCrypto, isFiat } from '../money/index.js';
import type { BalancesResponse } from './balances.schema.js';
import { WITHDRAWAL_MACHINE, WITHDRAWAL_STATUSES } from './withdrawal.rules.js';

/** Statuses whose debit is neither paid out nor returned yet: every non-final one. */
export const IN_FLIGHT_STATUSES = WITHDRAWAL_STATUSES.filter((s) => !WITHDRAWAL_MACHINE.terminal.includes(s));

/** An exact ledger amount as the API writes it: the currency's decimals at least, never rounded away. */
function formatBalance(value: string, currency: string): string {
  const d = new Dec(value);
  const decimals = isFiat(currency) || isCrypto(currency) ? decimalsOf(currency) : 18;
  const fixed = d.decimalPlaces() > decimals ? d.toFixed() : d.toFixed(decimals);
  // Crypto amounts drop trailing zeros, as everywhere else in the API ("0.0025", fiat "10.50").
  return isFiat(currency) || !fixed.includes('.') ? fixed : fixed.replace(/\.?0+$/, '');
}

/** Pure: the response from the ledger's MERCHANT balances and the in-flight sums. */
export function balancesView(
  merchant: { currency: string; amount: string }[],
  inFlight: { currency: string; amount: string }[],
  settlementCurrency: string,
): BalancesResponse {
  const currencies = [...new Set([settlementCurrency, ...merchant.map((b) => b.currency), ...inFlight.map((p) => p.currency)])].sort();
  return {
    balances: currencies.map((currency) => ({
      currency,
      available: formatBalance(merchant.find((b) => b.currency === currency)?.amount ?? '0', currency),
      pending: formatBalance(inFlight.find((p) => p.currency === currency)?.amount ?? '0', currency),
    })),
  };
}

export async function getBusinessBalances(db: Db, business: { id: string; settlementCurrency: string }): Promise<BalancesResponse> {
  const read = async (tx: Queryable) => {
    const ledger = await getBalances(tx, business.id);
    const inFlight = await tx
      .select({ currency: withdrawals.settlementCurrency, amount: sql<string>`sum(${withdrawals.deductedSettlementAmount})::text` })
      .from(withdrawals)
      .where(and(eq(withdrawals.businessId, business.id), inArray(withdrawals.status, IN_FLIGHT_STATUSES)))
      .groupBy(withdrawals.settlementCurrency);
    return balancesView(ledger.filter((b) => b.account === 'MERCHANT'), inFlight, business.settlementCurrency);
  };
  return db.transaction(read, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}
