/** tRPC answers carry times as REST does: every Date, however deep, becomes integer UNIX seconds; nothing else changes. */
import { describe, expect, it } from 'vitest';
import { unixTimes } from '../../server/edges/unix-times.rules.js';

describe('unixTimes', () => {
  it('converts Dates in objects and arrays, floors milliseconds, keeps the rest', () => {
    const at = new Date('2026-01-15T12:00:00.999Z');
    expect(unixTimes({ id: 'a', createdAt: at, revokedAt: null, n: 3, list: [{ at }, 'x'], nested: { deep: { at } } })).toEqual({
      id: 'a', createdAt: 1768478400, revokedAt: null, n: 3, list: [{ at: 1768478400 }, 'x'], nested: { deep: { at: 1768478400 } },
    });
  });
});
