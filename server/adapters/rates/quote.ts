/**
 * What a rate source returns, and how it fails. A source answers with quotes or throws one of
 * the typed errors below: never a made-up quote, never an untyped crash.
 */
import type { Crypto, Fiat } from './currencies.js';

/** One market price: `price` units of `quote` (fiat) for one unit of `base` (crypto). */
export type Quote = {
  source: string;
  base: Crypto;
  quote: Fiat;
  /** Positive plain decimal string. */
  price: string;
  /** When the quote was fetched (the public endpoints give no per-price time). */
  at: Date;
};

/**
 * A round's outcome when the provider answered: the quotes it gave, and the problems with parts
 * of the answer (a price that does not parse, one currency of several refused) that were left
 * out rather than guessed. A round that yields nothing throws instead.
 */
export type FetchResult = { quotes: Quote[]; errors: RateSourceError[] };

export interface RateSource {
  readonly name: string;
  /** Fetch every quote this source gives; `signal` aborts it (stop). */
  fetchQuotes(signal?: AbortSignal): Promise<FetchResult>;
}

/** What every source is built with. */
export type SourceOptions = {
  /** Provider base URL without trailing slash (KASSA_RATES_<SOURCE>_URL); defaults to the public API. */
  baseUrl?: string;
  /** Per-request timeout; default 10 000 ms. */
  timeoutMs?: number;
  /** Clock stamping the quotes; default `new Date()`. */
  now?: () => Date;
};

export const DEFAULT_TIMEOUT_MS = 10_000;

export type RateSourceErrorKind = 'rate_limited' | 'http' | 'malformed' | 'timeout' | 'network' | 'provider';

/** Base of every failure of a source; `kind` tells which. */
export class RateSourceError extends Error {
  constructor(
    readonly source: string,
    readonly kind: RateSourceErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${message}`, options);
    this.name = 'RateSourceError';
  }
}

/** HTTP 429: the provider asks us to wait `retryAfterS` seconds (from Retry-After; null if absent or unreadable). */
export class RateLimitedError extends RateSourceError {
  constructor(source: string, readonly retryAfterS: number | null) {
    super(source, 'rate_limited', `rate limited (429)${retryAfterS === null ? '' : `, retry after ${retryAfterS} s`}`);
    this.name = 'RateLimitedError';
  }
}

/** Any other non-2xx answer. */
export class RateSourceHttpError extends RateSourceError {
  constructor(source: string, readonly status: number, detail: string) {
    super(source, 'http', `HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'RateSourceHttpError';
  }
}

/** A 2xx answer whose body is not what the provider documents. */
export class MalformedResponseError extends RateSourceError {
  constructor(source: string, detail: string) {
    super(source, 'malformed', `malformed response: ${detail}`);
    this.name = 'MalformedResponseError';
  }
}

/** The provider said it failed (Kraken's non-empty `error` array, Coinbase's `errors`). */
export class ProviderError extends RateSourceError {
  constructor(source: string, readonly errors: string[]) {
    super(source, 'provider', `provider error: ${errors.join('; ')}`);
    this.name = 'ProviderError';
  }
}

export class RateSourceTimeoutError extends RateSourceError {
  constructor(source: string, readonly timeoutMs: number) {
    super(source, 'timeout', `no answer within ${timeoutMs} ms`);
    this.name = 'RateSourceTimeoutError';
  }
}

export class RateSourceNetworkError extends RateSourceError {
  constructor(source: string, cause: unknown) {
    super(source, 'network', `request failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RateSourceNetworkError';
  }
}
