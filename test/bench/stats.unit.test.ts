import { describe, expect, it } from 'vitest';
import { sumOrNull } from '../../bench/stats.js';

describe('sumOrNull', () => {
  it('adds the parts', () => {
    expect(sumOrNull(0.25, 0.125, 0.5)).toBe(0.875);
    expect(sumOrNull()).toBe(0);
  });

  it('is null when any part is unknown, never the sum of the others', () => {
    expect(sumOrNull(0.3, null, 0.1)).toBeNull();
    expect(sumOrNull(0.3, undefined)).toBeNull();
    expect(sumOrNull(0.3, Number.NaN)).toBeNull();
    expect(sumOrNull(Number.POSITIVE_INFINITY, 1)).toBeNull();
  });
});
