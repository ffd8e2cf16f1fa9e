import { describe, expect, it } from 'vitest';
import { cachedSecret, cachedSecretCount, forgetSecret } from '../../server/platform/secret-cache.js';
import { encryptSecret, generateMasterKey, parseMasterKey } from '../../server/platform/secrets.js';

describe('cachedSecret', () => {
  it('decrypts once and answers the same plain text after', () => {
    const key = parseMasterKey(generateMasterKey());
    const sealed = encryptSecret(key, 'secret-one');
    expect(cachedSecret(key, sealed)).toBe('secret-one');
    expect(cachedSecretCount(key)).toBe(1);
    expect(cachedSecret(key, sealed)).toBe('secret-one');
    expect(cachedSecretCount(key)).toBe(1);
  });

  it('keeps at most the limit, dropping the least recently used', () => {
    const key = parseMasterKey(generateMasterKey());
    const sealed = ['a', 'b', 'c'].map((p) => encryptSecret(key, p));
    cachedSecret(key, sealed[0]!, 2);
    cachedSecret(key, sealed[1]!, 2);
    cachedSecret(key, sealed[0]!, 2); // a is now the most recent
    cachedSecret(key, sealed[2]!, 2); // evicts b
    expect(cachedSecretCount(key)).toBe(2);
    forgetSecret(key, sealed[0]!);
    forgetSecret(key, sealed[2]!);
    expect(cachedSecretCount(key)).toBe(0);
  });

  it('does not share entries between master keys, and a wrong key still fails', () => {
    const one = parseMasterKey(generateMasterKey());
    const other = parseMasterKey(generateMasterKey());
    const sealed = encryptSecret(one, 'only-for-one');
    expect(cachedSecret(one, sealed)).toBe('only-for-one');
    expect(() => cachedSecret(other, sealed)).toThrow();
    expect(cachedSecretCount(other)).toBe(0);
  });

  it('forgets a revoked secret', () => {
    const key = parseMasterKey(generateMasterKey());
    const sealed = encryptSecret(key, 'revoked');
    cachedSecret(key, sealed);
    forgetSecret(key, sealed);
    expect(cachedSecretCount(key)).toBe(0);
  });
});
