/**
 * The deposit addresses a scanner watches: every address handed out so far.
 * Payments take their derivation index from a sequence (one per numbering:
 * see NetworkAccess.addressSequence), so "handed out" is every index up to
 * the sequence's last value, which also counts indices of transactions still
 * in flight. Deriving them needs no coordination with the process that
 * created the payment (a web process may run apart from the worker).
 */
import type { Sql } from 'postgres';

/** The highest derivation index handed out so far by `sequence` (0 before the first payment). */
export async function highestAssignedIndex(sql: Sql, sequence: string): Promise<number> {
  const [row] = await sql<{ last_value: string; is_called: boolean }[]>`select last_value, is_called from ${sql(sequence)}`;
  return row && row.is_called ? Number(row.last_value) : 0;
}

/** A growing set of lower-case addresses, extended by deriving the indices handed out since the last refresh. */
export class DerivedAddressSet {
  private readonly addresses = new Set<string>();
  private derivedUpTo = -1;

  constructor(
    private readonly sql: Sql,
    private readonly sequence: string,
    private readonly derive: (index: number) => string,
  ) {}

  has(address: string): boolean {
    return this.addresses.has(address);
  }

  get size(): number {
    return this.addresses.size;
  }

  /** Derive up to the highest index handed out; cheap when nothing changed. */
  async refresh(): Promise<void> {
    const highest = await highestAssignedIndex(this.sql, this.sequence);
    for (let i = this.derivedUpTo + 1; i <= highest; i++) this.addresses.add(this.derive(i).toLowerCase());
    this.derivedUpTo = Math.max(this.derivedUpTo, highest);
  }
}
