import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CreatePaymentSchema } from '../../server/modules/payments/index.js';
import { requestHash } from '../../server/platform/idempotency.js';

/** The hash as stored before the code-unit sort (keys ordered by localeCompare). */
function localeHash(input: Record<string, unknown>): string {
  const sorted = Object.fromEntries(
    Object.entries({ ...input, businessId: String(input.businessId).toLowerCase() })
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

describe('requestHash', () => {
  it('orders every create-request field as the stored hashes did (localeCompare)', () => {
    const keys = Object.keys(CreatePaymentSchema.shape);
    expect(keys.length).toBeGreaterThan(10);
    const input = Object.fromEntries(keys.map((k, i) => [k, `v${i}`]));
    input.businessId = 'AB3F0E7A-2C1D-4E5F-8A9B-0C1D2E3F4A5B';
    expect(requestHash(input as { businessId: string })).toBe(localeHash(input));
    expect([...keys].sort((a, b) => a.localeCompare(b))).toEqual([...keys].sort());
  });

  it('ignores undefined fields and the case of businessId', () => {
    const a = requestHash({ businessId: 'AB3F0E7A-2C1D-4E5F-8A9B-0C1D2E3F4A5B', locale: 'en', type: undefined });
    const b = requestHash({ locale: 'en', businessId: 'ab3f0e7a-2c1d-4e5f-8a9b-0c1d2e3f4a5b' });
    expect(a).toBe(b);
    expect(a).not.toBe(requestHash({ locale: 'de', businessId: 'ab3f0e7a-2c1d-4e5f-8a9b-0c1d2e3f4a5b' }));
  });
});
