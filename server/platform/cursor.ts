/** Opaque pagination cursors: the (createdAt, id) of the last item of the previous page. */
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { validationFailed } from './errors.js';
import { UUID_RE } from './validate.js';

export type Cursor = { createdAt: Date; id: string };

export function encodeCursor(row: Cursor): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

/** Only what this API could have issued: a UUID and a date PostgreSQL can compare. */
export function decodeCursor(cursor: string): Cursor | null {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  const year = createdAt.getUTCFullYear();
  if (!id || !UUID_RE.test(id) || Number.isNaN(createdAt.getTime()) || year < 2000 || year > 9999) return null;
  return { createdAt, id: id.toLowerCase() };
}

/** The decoded cursor, or a 400 naming the field. */
export function parseCursor(cursor: string | undefined): Cursor | null {
  if (cursor === undefined) return null;
  const decoded = decodeCursor(cursor);
  if (!decoded) throw validationFailed([{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
  return decoded;
}

/** The keyset condition "strictly after the cursor" for a (createdAt desc, id desc) order. */
export function afterCursor(createdAt: PgColumn, id: PgColumn, after: Cursor | null): SQL | undefined {
  return after ? or(lt(createdAt, after.createdAt), and(eq(createdAt, after.createdAt), lt(id, after.id))) : undefined;
}

/** Split a `limit + 1` query result into the page and the cursor of the next one. */
export function pageOf<T extends Cursor>(rows: T[], limit: number): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/**
 * One keyset page over (createdAt desc, id desc): the condition to add to a
 * query's filters, its order and limit (one row more than the page, to know
 * whether there is a next one), and the split of what came back. A bad
 * cursor is a 400 before any query runs.
 */
export function keyset(columns: { createdAt: PgColumn; id: PgColumn }, query: { cursor?: string; limit: number }) {
  const after = afterCursor(columns.createdAt, columns.id, parseCursor(query.cursor));
  return {
    where: (...filters: (SQL | undefined)[]) => and(...filters, after),
    orderBy: [desc(columns.createdAt), desc(columns.id)] as const,
    limit: query.limit + 1,
    page: <T extends Cursor>(rows: T[]) => pageOf(rows, query.limit),
  };
}
