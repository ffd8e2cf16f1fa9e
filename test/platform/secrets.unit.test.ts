/**
 * Secrets at rest (CONTRACT §2): AES-256-GCM under the master key, master
 * key parsing, constant-time comparison.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decryptSecret, encryptSecret, generateMasterKey, parseMasterKey, randomToken, safeEqual, sha256Hex,
} from '../../server/platform/secrets.js';

const HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const key = parseMasterKey(HEX);
const otherKey = parseMasterKey('ff'.repeat(32));

/** Flip one bit of the byte at `index` of a base64url string's decoded bytes. */
function flipByte(b64url: string, index: number): string {
  const bytes = Buffer.from(b64url, 'base64url');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('encryptSecret / decryptSecret', () => {
  it('round-trips', () => {
    for (const plain of ['ks_abc123', 'whsec_' + randomBytes(24).toString('base64'), '', 'ünïcødé — 東京 🔑', 'x'.repeat(5000)]) {
      const sealed = encryptSecret(key, plain);
      expect(decryptSecret(key, sealed)).toBe(plain);
    }
  });

  it('is versioned: v1.<iv>.<ciphertext+tag> in base64url', () => {
    const sealed = encryptSecret(key, 'ks_abc');
    const parts = sealed.split('.');
    expect(parts).toHaveLength(3);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parts[2]).toMatch(/^[A-Za-z0-9_-]+$/);
    // 12-byte IV; ciphertext as long as the plaintext plus a 16-byte tag.
    expect(Buffer.from(parts[1]!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[2]!, 'base64url')).toHaveLength('ks_abc'.length + 16);
  });

  it('gives a different ciphertext every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) seen.add(encryptSecret(key, 'ks_same_secret'));
    expect(seen.size).toBe(20);
  });

  it('does not contain the plaintext in any common encoding', () => {
    const plain = 'ks_ThisIsAVerySecretValue1234567890';
    const sealed = encryptSecret(key, plain);
    expect(sealed).not.toContain(plain);
    expect(sealed).not.toContain(plain.slice(3, 20));
    expect(sealed).not.toContain(Buffer.from(plain).toString('base64url').slice(0, 16));
    expect(sealed).not.toContain(Buffer.from(plain).toString('base64').slice(0, 16));
    expect(sealed).not.toContain(Buffer.from(plain).toString('hex').slice(0, 16));
  });

  it('refuses a tampered ciphertext, tag or IV', () => {
    const sealed = encryptSecret(key, 'ks_tamper_me');
    const [v, iv, body] = sealed.split('.') as [string, string, string];
    const bodyLength = Buffer.from(body, 'base64url').length;
    expect(() => decryptSecret(key, `${v}.${iv}.${flipByte(body, 0)}`)).toThrow();
    expect(() => decryptSecret(key, `${v}.${iv}.${flipByte(body, bodyLength - 1)}`)).toThrow();
    expect(() => decryptSecret(key, `${v}.${flipByte(iv, 0)}.${body}`)).toThrow();
    // Truncated (tag cut short) and swapped-in ciphertext of another secret.
    expect(() => decryptSecret(key, `${v}.${iv}.${Buffer.from(body, 'base64url').subarray(0, bodyLength - 1).toString('base64url')}`)).toThrow();
    const other = encryptSecret(key, 'ks_tamper_me').split('.')[2]!;
    expect(() => decryptSecret(key, `${v}.${iv}.${other}`)).toThrow();
  });

  it('refuses malformed input and unknown versions', () => {
    const sealed = encryptSecret(key, 'ks_x');
    expect(() => decryptSecret(key, sealed.replace(/^v1\./, 'v2.'))).toThrow();
    expect(() => decryptSecret(key, 'ks_x')).toThrow();
    expect(() => decryptSecret(key, '')).toThrow();
    expect(() => decryptSecret(key, 'v1..')).toThrow();
  });

  it('refuses the wrong key', () => {
    const sealed = encryptSecret(key, 'ks_secret');
    expect(() => decryptSecret(otherKey, sealed)).toThrow();
    expect(decryptSecret(key, sealed)).toBe('ks_secret');
  });
});

describe('parseMasterKey', () => {
  const bytes = Buffer.from(HEX, 'hex');

  it('reads 64 hex characters (either case)', () => {
    expect(parseMasterKey(HEX).equals(bytes)).toBe(true);
    expect(parseMasterKey(HEX.toUpperCase()).equals(bytes)).toBe(true);
    expect(parseMasterKey(HEX)).toHaveLength(32);
  });

  it('reads base64 and base64url of 32 bytes', () => {
    const raw = randomBytes(32);
    expect(parseMasterKey(raw.toString('base64')).equals(raw)).toBe(true);
    expect(parseMasterKey(raw.toString('base64url')).equals(raw)).toBe(true);
    expect(parseMasterKey(bytes.toString('base64')).equals(bytes)).toBe(true);
  });

  it('ignores surrounding whitespace (a key file ends with a newline)', () => {
    expect(parseMasterKey(`${HEX}\n`).equals(bytes)).toBe(true);
    expect(parseMasterKey(`  ${bytes.toString('base64')}\n`).equals(bytes)).toBe(true);
  });

  it('refuses anything that is not 32 bytes', () => {
    expect(() => parseMasterKey('')).toThrow();
    expect(() => parseMasterKey('abc')).toThrow();
    expect(() => parseMasterKey(HEX.slice(2))).toThrow();
    expect(() => parseMasterKey(`${HEX}00`)).toThrow();
    expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow();
    expect(() => parseMasterKey(randomBytes(33).toString('base64'))).toThrow();
  });

  it('generateMasterKey makes a fresh parseable 64-hex key', () => {
    const a = generateMasterKey();
    const b = generateMasterKey();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(parseMasterKey(a)).toHaveLength(32);
    // A secret sealed with one generated key opens only with it.
    const sealed = encryptSecret(parseMasterKey(a), 'ks_k');
    expect(decryptSecret(parseMasterKey(a), sealed)).toBe('ks_k');
    expect(() => decryptSecret(parseMasterKey(b), sealed)).toThrow();
  });
});

describe('safeEqual', () => {
  it('is true only for identical strings', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('ünï', 'ünï')).toBe(true);
    const sig = 'f'.repeat(64);
    expect(safeEqual(sig, sig)).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'ABC')).toBe(false);
    expect(safeEqual(sig, `${'f'.repeat(63)}e`)).toBe(false);
  });

  it('is false for different lengths, including prefixes', () => {
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('abcd', 'abc')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
    // Same UTF-16 length, different byte length.
    expect(safeEqual('é', 'e')).toBe(false);
  });
});

describe('hashes and tokens', () => {
  it('sha256Hex matches the FIPS 180-2 test vector', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('randomToken: prefix plus base64url of the requested bytes, unique', () => {
    const a = randomToken('kop_', 32);
    expect(a).toMatch(/^kop_[A-Za-z0-9_-]{43}$/);
    expect(randomToken('kop_', 32)).not.toBe(a);
  });

  it('randomToken: drawn from a pool, no byte is handed out twice, across refills and past the pool size', () => {
    // 16-byte tokens, 2,000 of them: the 4 KiB pool is refilled about 8 times on the way.
    const tokens = Array.from({ length: 2000 }, () => randomToken('', 16));
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(tokens.every((t) => /^[A-Za-z0-9_-]{22}$/.test(t))).toBe(true);
    // Odd sizes that straddle a refill, and one larger than the pool.
    const odd = Array.from({ length: 200 }, () => Buffer.from(randomToken('', 37), 'base64url'));
    expect(odd.every((b) => b.length === 37)).toBe(true);
    expect(new Set(odd.map((b) => b.toString('hex'))).size).toBe(odd.length);
    expect(Buffer.from(randomToken('', 5000), 'base64url').length).toBe(5000);
    // Not a constant pool: the bytes of 2,000 tokens are spread over all 256 values.
    const counts = new Array<number>(256).fill(0);
    for (const t of tokens) for (const byte of Buffer.from(t, 'base64url')) counts[byte]!++;
    expect(Math.min(...counts)).toBeGreaterThan(50); // expectation 125 per value
  });
});
