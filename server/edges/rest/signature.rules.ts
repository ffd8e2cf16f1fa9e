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

const HEADER_RE = /^KASSA-API api-key=([A-Za-z0-9_-]{1,128}),signature=([0-9a-f]{64}),timestamp=([0-9]{1,12})$/;

/** Parse the header; null when it is not exactly the documented form. */
export function parseAuthorization(value: string | undefined): ParsedAuthorization | null {
  if (!value) return null;
  const m = HEADER_RE.exec(value.trim());
  if (!m) return null;
  return { apiKey: m[1]!, signature: m[2]!, timestamp: Number(m[3]) };
}
