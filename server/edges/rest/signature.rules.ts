/**
 * The merchant request signature of CONTRACT §2, as pure functions shared by
 * the server, the example script, the tests and any TypeScript client:
 *
 *   Authorization: KASSA-API api-key=<key>,signature=<hex>,timestamp=<unix s>
 *   signature = hex(HMAC-SHA256(secret, `${timestamp}\n${METHOD}\n${pathWithQuery}\n${rawBody}`))
 */
import { createHmac } from 'node:crypto';

export const AUTH_SCHEME = 'KASSA-API';
/** Largest accepted distance between the request timestamp and the server clock. */
export const MAX_CLOCK_SKEW_S = 300;

export function signaturePayload(timestamp: string, method: string, pathWithQuery: string, rawBody: string): string {
  return `${timestamp}\n${method.toUpperCase()}\n${pathWithQuery}\n${rawBody}`;
}

export function sign(secret: string, timestamp: string, method: string, pathWithQuery: string, rawBody: string): string {
  return createHmac('sha256', secret).update(signaturePayload(timestamp, method, pathWithQuery, rawBody)).digest('hex');
}

/** Build the Authorization header value for one request. */
export function authorizationHeader(
  apiKey: string,
  secret: string,
  request: { method: string; path: string; body?: string; timestamp?: number },
): string {
  const timestamp = String(request.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = sign(secret, timestamp, request.method, request.path, request.body ?? '');
  return `${AUTH_SCHEME} api-key=${apiKey},signature=${signature},timestamp=${timestamp}`;
}

export type ParsedAuthorization = { apiKey: string; signature: string; timestamp: number };

// The timestamp without leading zeros: the server signs it as it writes the number, so "0179…" would be
// verified over other text than the client signed (and two spellings would name one request).
const HEADER_RE = /^KASSA-API api-key=([A-Za-z0-9_-]{1,128}),signature=([0-9a-f]{64}),timestamp=(0|[1-9][0-9]{0,11})$/;

/** The header's documented form, quoted in refusals. */
export const HEADER_FORM = `${AUTH_SCHEME} api-key=<API key>,signature=<64 lowercase hex>,timestamp=<UNIX seconds>`;

/** Parse the header; null when it is not exactly the documented form (diagnoseAuthorization says why). */
export function parseAuthorization(value: string | undefined): ParsedAuthorization | null {
  if (!value) return null;
  const m = HEADER_RE.exec(value.trim());
  if (!m) return null;
  return { apiKey: m[1]!, signature: m[2]!, timestamp: Number(m[3]) };
}

/**
 * Why a header that parseAuthorization refused is wrong, in words a merchant
 * can act on. Only the header's own parts are discussed; nothing about the
 * key's existence or its secret.
 */
export function diagnoseAuthorization(value: string | undefined): string {
  if (!value || !value.trim()) return `The Authorization header is missing; expected ${HEADER_FORM}.`;
  const text = value.trim();
  if (!text.startsWith(`${AUTH_SCHEME} `)) return `The Authorization header must start with "${AUTH_SCHEME} "; expected ${HEADER_FORM}.`;
  const parts = new Map(
    text.slice(AUTH_SCHEME.length + 1).split(',').map((part) => {
      const eq = part.indexOf('=');
      return [eq < 0 ? part.trim() : part.slice(0, eq).trim(), eq < 0 ? '' : part.slice(eq + 1).trim()] as const;
    }),
  );
  for (const name of ['api-key', 'signature', 'timestamp']) {
    if (!parts.get(name)) return `The Authorization header has no ${name}=…; expected ${HEADER_FORM}.`;
  }
  const timestamp = parts.get('timestamp')!;
  if (/^[0-9]{13,16}$/.test(timestamp)) {
    return `timestamp=${timestamp} looks like milliseconds; send UNIX seconds (${timestamp.slice(0, -3)}), e.g. Math.floor(Date.now() / 1000).`;
  }
  if (!/^[0-9]{1,12}$/.test(timestamp)) return `timestamp must be UNIX seconds as digits only (e.g. 1700000000), not ${JSON.stringify(timestamp.slice(0, 40))}.`;
  if (/^0[0-9]/.test(timestamp)) return `timestamp must be UNIX seconds without leading zeros (e.g. ${timestamp.replace(/^0+(?=[0-9])/, '')}), not ${JSON.stringify(timestamp)}.`;
  if (!/^[0-9a-f]{64}$/.test(parts.get('signature')!)) {
    return 'signature must be the HMAC-SHA256 as 64 lowercase hex characters (not base64, not upper case).';
  }
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(parts.get('api-key')!)) return 'api-key must be the API key exactly as issued (letters, digits, - and _).';
  return `The Authorization header must be exactly ${HEADER_FORM}, with no spaces or other parts.`;
}

/**
 * The string the server verified, with the body replaced by its length: what
 * a merchant compares with the string they signed. It holds only what the
 * request itself carried, never the secret or the expected signature.
 */
export function signedStringShape(timestamp: string, method: string, pathWithQuery: string, rawBody: string): string {
  const body = rawBody === '' ? '' : `<the raw body, ${Buffer.byteLength(rawBody, 'utf8')} bytes, exactly as sent>`;
  return JSON.stringify(signaturePayload(timestamp, method, pathWithQuery, body));
}
