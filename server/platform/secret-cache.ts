/**
 * Decrypted secrets (API key secrets, callback secrets) kept in a bounded
 * LRU, so a hot key is decrypted once instead of on every request
 * (AES-256-GCM setup was ~3% of the create and read paths' CPU, bench
 * scenarios 1–2). Keyed by master key and sealed text: a rotated secret is a
 * new sealed text, and the cache never decides whether a key is valid — the
 * key row is still read on every request, so a revoked key is refused at once.
 * `forgetSecret` drops a revoked secret so its plain text leaves memory.
 */
import { LRUCache } from 'lru-cache';
import { decryptSecret, type MasterKey } from './secrets.js';

/** Enough for every active key of a large installation; the least recently used is dropped first. */
export const SECRET_CACHE_SIZE = 1000;

const caches = new WeakMap<MasterKey, LRUCache<string, string>>();

/** `decryptSecret`, remembered. `limit` sizes a master key's cache when its first secret is cached. */
export function cachedSecret(key: MasterKey, sealed: string, limit = SECRET_CACHE_SIZE): string {
  let cache = caches.get(key);
  if (!cache) caches.set(key, (cache = new LRUCache<string, string>({ max: limit })));
  const hit = cache.get(sealed);
  if (hit !== undefined) return hit;
  const plain = decryptSecret(key, sealed);
  cache.set(sealed, plain);
  return plain;
}

/** Drop a secret (a revoked key's), whatever master key it was cached under. */
export function forgetSecret(key: MasterKey, sealed: string): void {
  caches.get(key)?.delete(sealed);
}

/** How many secrets are cached under a master key (for tests). */
export function cachedSecretCount(key: MasterKey): number {
  return caches.get(key)?.size ?? 0;
}
