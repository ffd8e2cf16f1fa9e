/**
 * The fingerprint of a create request, stored beside its idempotency key:
 * canonical JSON (sorted keys, undefined dropped, businessId in lower case
 * since UUIDs are case-insensitive), so equal requests hash equal and a
 * reused key with another body can be told apart.
 */
import { createHash } from 'node:crypto';

export function requestHash(input: { businessId: string } & Record<string, unknown>): string {
  const sorted = Object.fromEntries(
    Object.entries({ ...input, businessId: input.businessId.toLowerCase() })
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}
