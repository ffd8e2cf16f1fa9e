/**
 * The compare-and-set every status change makes: move row `id` from `from`
 * to `to` only if it is still in `from`. Returns how many rows moved (0:
 * someone else moved it first). Used by each entity's EntityStore.
 */
import { and, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './client.js';

type WithStatus = PgTable & { id: PgColumn; status: PgColumn };

export async function compareAndSetStatus(tx: Queryable, table: WithStatus, id: string, from: string, to: string, set: Record<string, unknown> = {}): Promise<number> {
  const moved = await tx
    .update(table)
    .set({ ...set, status: to } as never)
    .where(and(eq(table.id, id), eq(table.status, from)))
    .returning({ id: table.id });
  return moved.length;
}
