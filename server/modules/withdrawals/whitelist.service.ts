/** Whitelisted withdrawal addresses (2023-02-09: `network` mandatory; pairs as for withdrawals). */
import { and, desc, eq } from 'drizzle-orm';
import { whitelistedAddresses } from '../../../db/schema.js';
import type { WithdrawalsDeps as Deps } from './ports.js';
import { notFound, unprocessable } from '../../platform/errors.js';
import { UUID_RE } from '../../platform/validate.js';
import { unixSeconds } from '../payments/index.js';
import { assertDestination } from './withdrawal.rules.js';
import type { CreateWhitelistInput } from './whitelist.schema.js';


type Row = typeof whitelistedAddresses.$inferSelect;
const toRecord = (r: Row) => ({
  id: r.id,
  currency: r.currency,
  network: r.network,
  address: r.address,
  destinationTag: r.destinationTag || null,
  label: r.label,
  createdAt: unixSeconds(r.createdAt),
});

export async function addWhitelisted(deps: Deps, businessId: string, input: CreateWhitelistInput) {
  assertDestination(input, 'currency', deps.networks);
  const [row] = await deps.database.db
    .insert(whitelistedAddresses)
    .values({ businessId, ...input, destinationTag: input.destinationTag ?? '', createdAt: deps.now() })
    .onConflictDoNothing()
    .returning();
  if (!row) throw unprocessable('ALREADY_WHITELISTED', 'This address is already whitelisted for this currency and network.');
  return toRecord(row);
}

export async function listWhitelisted(deps: Deps, businessId: string) {
  const rows = await deps.database.db
    .select()
    .from(whitelistedAddresses)
    .where(eq(whitelistedAddresses.businessId, businessId))
    .orderBy(desc(whitelistedAddresses.createdAt));
  return { items: rows.map(toRecord) };
}

export async function removeWhitelisted(deps: Deps, businessId: string, id: string) {
  const deleted = UUID_RE.test(id)
    ? await deps.database.db
        .delete(whitelistedAddresses)
        .where(and(eq(whitelistedAddresses.id, id.toLowerCase()), eq(whitelistedAddresses.businessId, businessId)))
        .returning({ id: whitelistedAddresses.id })
    : [];
  if (deleted.length === 0) throw notFound(`Whitelisted address ${id} not found.`);
  return { id: deleted[0]!.id, deleted: true };
}
