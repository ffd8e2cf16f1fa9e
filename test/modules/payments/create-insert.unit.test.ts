/**
 * The prepared create INSERT (payment-service.ts) writes every column of
 * `payments` but `id`, null where the request has no value. A column added
 * later with a database default would silently get null instead: this test
 * makes that a failure to notice.
 */
import { getTableColumns } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { payments } from '../../../db/schema.js';

describe('payments columns and the create INSERT', () => {
  it('only id (generated) and createdAt (always written) have defaults', () => {
    const withDefault = Object.entries(getTableColumns(payments))
      .filter(([, column]) => column.hasDefault)
      .map(([name]) => name);
    expect(withDefault.sort()).toEqual(['createdAt', 'id']);
  });
});
