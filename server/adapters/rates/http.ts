/**
 * One GET of a provider's JSON, with the failures every source shares turned into typed errors:
 * a timeout, a network failure, 429 with its Retry-After, any other non-2xx, a body that is not
 * JSON. Numbers in the body stay strings (lossless-json.rules.ts).
 */
import { parseJsonLossless } from './lossless-json.rules.js';
import {
  MalformedResponseError,
  RateLimitedError,
  RateSourceHttpError,
  RateSourceNetworkError,
  RateSourceTimeoutError,
} from './quote.js';

export type GetJsonOptions = {
  source: string;
  timeoutMs: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
};

/**
 * Seconds to wait from a Retry-After header: delay-seconds or an HTTP date (RFC 9110 §10.2.3);
 * null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: Date = new Date()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^[0-9]+$/.test(v)) return Number(v);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}

export async function getJson(url: string, options: GetJsonOptions): Promise<unknown> {
  const { source, timeoutMs } = options;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let text: string;
  let status: number;
  let headers: Headers;
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': 'kassa-rates', ...options.headers },
      signal,
      redirect: 'error',
    });
    status = response.status;
    headers = response.headers;
    // The body is read under the same signal: a provider that stalls mid-body times out too.
    text = await response.text();
  } catch (error) {
    if (timeout.aborted) throw new RateSourceTimeoutError(source, timeoutMs);
    throw new RateSourceNetworkError(source, error);
  }
  if (status === 429) throw new RateLimitedError(source, parseRetryAfter(headers.get('retry-after')));
  if (status < 200 || status > 299) throw new RateSourceHttpError(source, status, text.slice(0, 200));
  try {
    return parseJsonLossless(text);
  } catch {
    throw new MalformedResponseError(source, `not JSON (${text.slice(0, 80)})`);
  }
}

/** Narrow an unknown JSON value to a plain object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
