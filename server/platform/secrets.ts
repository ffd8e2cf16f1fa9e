/**
 * Secrets at rest. API secrets and callback secrets must be read back in
 * clear (to verify and to make HMAC signatures), so they are encrypted with
 * AES-256-GCM under KASSA_MASTER_KEY rather than hashed. Operator tokens are
 * only compared, so they are stored as SHA-256 hashes instead.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

export type MasterKey = Buffer;

/** Accepts 64 hex characters or 32 bytes in base64/base64url. */
export function parseMasterKey(text: string): MasterKey {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('KASSA_MASTER_KEY must be 32 bytes');
  return key;
}

export function generateMasterKey(): string {
  return randomBytes(32).toString('hex');
}

/** `v1.<iv>.<ciphertext+tag>`, base64url parts. */
export function encryptSecret(key: MasterKey, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

export function decryptSecret(key: MasterKey, sealed: string): string {
  const [version, ivText, bodyText] = sealed.split('.');
  if (version !== 'v1' || !ivText || !bodyText) throw new Error('unknown secret format');
  const body = Buffer.from(bodyText, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Constant-time equality of two strings (false when lengths differ, without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ba.length !== bb.length) {
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}

/**
 * Random bytes from a pool refilled 4 KiB at a time, each byte handed out once: one call into
 * OpenSSL per 256 checkout tokens instead of one each (node's randomUUID caches its entropy the
 * same way). randomBytes(16) was 2.7% of the Kassa process's CPU per create (bench scenario 1).
 */
const RANDOM_POOL_BYTES = 4096;
const randomPool = Buffer.allocUnsafeSlow(RANDOM_POOL_BYTES);
let randomPoolUsed = RANDOM_POOL_BYTES;

function pooledRandomBytes(bytes: number): Buffer {
  if (bytes > RANDOM_POOL_BYTES) return randomBytes(bytes);
  if (randomPoolUsed + bytes > RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomPoolUsed = 0;
  }
  return randomPool.subarray(randomPoolUsed, (randomPoolUsed += bytes));
}

/** `prefix` and `bytes` random bytes in base64url. The pool's copy is zeroed: API secrets and operator tokens come from here. */
export function randomToken(prefix: string, bytes: number): string {
  const drawn = pooledRandomBytes(bytes);
  const token = `${prefix}${drawn.toString('base64url')}`;
  drawn.fill(0);
  return token;
}

/** A key check value: proves which master key a database was made with, without revealing it. */
export function masterKeyCheck(key: MasterKey): string {
  return createHmac('sha256', key).update('kassa master key check v1').digest('hex');
}
