/**
 * The storage side of the one `transition()` (platform/state-machine.ts) for
 * an entity kept in one table with a `status` column: the compare-and-set of
 * its row and the append of its row in the one `events` table. Each entity's
 * store is one call of `tableStore`, so the four stores cannot drift apart.
 */
import { and, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { EntityStore, StateMachine } from '../server/platform/state-machine.js';
import type { Queryable } from './client.js';
import { events, type EventEntityType } from './schema.js';

type WithStatus = PgTable & { id: PgColumn; status: PgColumn };

/** Move row `id` from `from` to `to` only if it is still in `from`; how many rows moved (0: someone else moved it first). */
async function compareAndSetStatus(tx: Queryable, table: WithStatus, id: string, from: string, to: string, set: Record<string, unknown>): Promise<number> {
  const moved = await tx
    .update(table)
    .set({ ...set, status: to } as never)
    .where(and(eq(table.id, id), eq(table.status, from)))
    .returning({ id: table.id });
  return moved.length;
}

export function tableStore<S extends string, Set extends Record<string, unknown> = never>(def: {
  entityType: EventEntityType;
  table: WithStatus;
  machine: StateMachine<S>;
  /** Columns that move with the status besides what the caller sets (e.g. a deposit's `confirmedAt`). */
  alsoSet?: (to: S, at: Date) => Record<string, unknown>;
}): EntityStore<Queryable, S, Set> {
  const { entityType, table, machine, alsoSet } = def;
  return {
    machine,
    // `alsoSet` moves with the status: not on an amendment, which keeps it.
    update: (tx, id, from, to, set, at) => compareAndSetStatus(tx, table, id, from, to, { ...(from === to ? {} : alsoSet?.(to, at)), ...set }),
    record: async (tx, e) => {
      await tx.insert(events).values({ entityType, entityId: e.id, fromStatus: e.from, toStatus: e.to, reason: e.reason, data: e.data, at: e.at });
    },
  };
}
