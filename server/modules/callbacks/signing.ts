/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): headers
 * `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` where
 * the signature is HMAC-SHA256, keyed with the base64 bytes of a `whsec_`
 * secret, over `<id>.<timestamp>.<body>`.
 *
 * `verifyCallback` is what merchants use (import it from
 * `kassa/server/modules/callbacks/signing.js` or copy this file: it needs only
 * node:crypto).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Accepted distance between a callback's timestamp and the receiver's clock. */
export const TOLERANCE_S = 5 * 60;

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function signCallback(secret: string, webhookId: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one attempt. Several secrets (during a rotation's overlap:
 * the new one first, then the one it replaces) give several space-separated
 * signatures, and a receiver holding either secret verifies it.
 */
export function callbackHeaders(secrets: string | readonly string[], webhookId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const all = typeof secrets === 'string' ? [secrets] : secrets;
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': all.map((secret) => signCallback(secret, webhookId, timestamp, body)).join(' '),
    'user-agent': 'Kassa-Callbacks/1',
  };
}

export class CallbackVerificationError extends Error {
  override name = 'CallbackVerificationError';
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name] ?? (headers as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Amount fields a receiver may get as numbers (spec §6.2 documents numbers, Kassa sends strings). */
const AMOUNT_KEYS = [
  'expectedDisplayAmount', 'actualDisplayAmount', 'estimatedWithdrawAmount', 'actualWithdrawAmount', 'deductedSettlementAmount',
  'withdrawFee', 'displayFee', 'displayRateDepegLossAmount', 'settlementRateDepegLossAmount', 'settlementServiceFee',
  'settlementMerchantTransactionFee',
];

/**
 * Verify a callback and return its parsed body, amounts normalised to
 * decimal strings (numbers are accepted too). Throws CallbackVerificationError
 * on a missing header, a stale or future timestamp, or no matching signature.
 * Several space-separated signatures are allowed (secret rotation).
 */
export function verifyCallback(
  secret: string,
  headers: Headers,
  rawBody: string | Buffer,
  options: { now?: Date; toleranceS?: number } = {},
): Record<string, unknown> {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) throw new CallbackVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^[0-9]{1,12}$/.test(timestampText)) throw new CallbackVerificationError('malformed webhook-timestamp');
  const timestamp = Number(timestampText);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceS ?? TOLERANCE_S)) throw new CallbackVerificationError('timestamp outside tolerance');
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const expected = Buffer.from(signCallback(secret, id, timestamp, body).slice(3), 'base64');
  const matches = signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new CallbackVerificationError('no matching signature');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CallbackVerificationError('body is not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CallbackVerificationError('body is not a JSON object');
  const out: Record<string, unknown> = { ...(parsed as Record<string, unknown>) };
  // A number is taken as written in the body, not as the double JSON.parse made of it (which
  // rounds 0.12345678901234567891 and turns 1e21 into "1e+21").
  const literals = new Map([...body.matchAll(AMOUNT_LITERAL)].map(([, key, literal]) => [key!, literal!]));
  for (const key of AMOUNT_KEYS) {
    if (typeof out[key] === 'number') out[key] = plainDecimal(literals.get(key) ?? String(out[key]));
  }
  return out;
}

/** `"<amount key>": <number>` in a JSON text, the number's literal captured. */
const AMOUNT_LITERAL = new RegExp(`"(${AMOUNT_KEYS.join('|')})"\\s*:\\s*(-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)`, 'g');

/**
 * A JSON number literal as a plain decimal string, exactly (no exponent, no float):
 * "1e21" → "1000000000000000000000", "1.5e-25" → "0.00000000000000000000000015", "2.50" → "2.50".
 */
export function plainDecimal(literal: string): string {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (!match) throw new CallbackVerificationError('amount is not a decimal number');
  const [, sign, whole, fraction = '', exponentText] = match;
  if (exponentText === undefined) return literal;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > 1000) throw new CallbackVerificationError('amount exponent out of range');
  // The digits without the point, and where the point goes in them.
  const digits = `${whole}${fraction}`;
  const point = whole!.length + exponent;
  const padded = point <= 0 ? `${'0'.repeat(1 - point)}${digits}` : point > digits.length ? `${digits}${'0'.repeat(point - digits.length)}` : digits;
  const at = Math.max(point, 1);
  const int = padded.slice(0, at).replace(/^0+(?=[0-9])/, '');
  const frac = padded.slice(at);
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}
