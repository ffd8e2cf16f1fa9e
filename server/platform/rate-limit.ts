/**
 * Rate limits (rate-limiter-flexible). In memory per process: with N web
 * processes behind a load balancer a client gets at most N× the budget,
 * which is acceptable for abuse protection; a shared store
 * (RateLimiterPostgres) is the drop-in for a strict global limit.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { KassaError } from './errors.js';

export class RateLimitedError extends KassaError {
  constructor(retryAfterS: number, why = 'Too many requests') {
    super(429, 'RATE_LIMITED', `${why}; retry in ${retryAfterS} s.`, [], { 'retry-after': String(retryAfterS) });
  }
}

/**
 * The lockout after failed authentications (documented in the README and
 * /docs), failures counted over a window:
 * - per client address (60): every request from it is 429 with Retry-After
 *   until the lock ends, correctly signed ones too (it is the guesser's);
 * - per API key (20, from any addresses): further wrong signatures on it are
 *   429, but a correctly signed request still passes. The key's id is no
 *   secret (it is in every Authorization header and payment record), so a
 *   lock that refused its owner would let anyone who saw it shut a merchant
 *   out; and a 256-bit HMAC secret is not guessed 20 times a minute anyway.
 * Successes are not counted.
 */
export const AUTH_LOCKOUT = { perKey: 20, perAddress: 60, windowS: 60, lockS: 60 } as const;

/**
 * Live checkout streams one process holds open at once: a payment's page open in a few tabs, a
 * household or office behind one address. More would be one client holding sockets.
 */
export const LIVE_STREAMS = { perToken: 5, perAddress: 50, retryAfterS: 5 } as const;

export class RateLimits {
  /** A checkout's own token: one customer's page, reconnecting and polling at most this often. */
  readonly checkoutToken = new RateLimiterMemory({ points: 120, duration: 60 });
  /** One address, across tokens: stops enumeration of checkout tokens. */
  readonly checkoutIp = new RateLimiterMemory({ points: 600, duration: 60 });

  /** Failed authentications per API key: wrong signatures on one key stop after 20 a minute. */
  readonly authFailuresKey = new RateLimiterMemory({ points: AUTH_LOCKOUT.perKey, duration: AUTH_LOCKOUT.windowS, blockDuration: AUTH_LOCKOUT.lockS });
  /** Failed authentications per client address, across keys. */
  readonly authFailuresIp = new RateLimiterMemory({ points: AUTH_LOCKOUT.perAddress, duration: AUTH_LOCKOUT.windowS, blockDuration: AUTH_LOCKOUT.lockS });

  /** Refuse (429) an address whose failures are over the limit, before even checking its signature. */
  async assertAddressNotBlocked(ip: string): Promise<void> {
    await this.assertUnder(this.authFailuresIp, ip, `${AUTH_LOCKOUT.perAddress} failed authentications from this address`, 'every request from it');
  }

  /** Refuse (429) a wrongly signed request on a key whose failures are over the limit (a correct one is never asked). */
  async assertKeyNotBlocked(apiKey: string | null): Promise<void> {
    if (apiKey) await this.assertUnder(this.authFailuresKey, apiKey, `${AUTH_LOCKOUT.perKey} failed authentications for this API key`, 'its wrong signatures; correctly signed requests still pass');
  }

  private async assertUnder(limiter: RateLimiterMemory, key: string, what: string, refused: string): Promise<void> {
    const state = await limiter.get(key);
    if (state && state.remainingPoints <= 0) {
      // Says which limit, never whether the key exists or the last guess was right.
      throw new RateLimitedError(
        Math.max(1, Math.ceil(state.msBeforeNext / 1000)),
        `Locked out: ${what} within ${AUTH_LOCKOUT.windowS} s lock out ${refused} for ${AUTH_LOCKOUT.lockS} s`,
      );
    }
  }

  async recordAuthFailure(ip: string, apiKey: string | null): Promise<void> {
    await this.authFailuresIp.penalty(ip, 1);
    if (apiKey) await this.authFailuresKey.penalty(apiKey, 1);
  }

  /** Open live-update streams, by `t:<token>` and `a:<address>`. */
  private readonly streams = new Map<string, number>();

  /**
   * Hold one live checkout stream open for `token` from `ip`, or refuse (429) past LIVE_STREAMS: the
   * request limits count streams started, not held, and each held one keeps a socket and a
   * subscription. Returns the release (idempotent), for when the stream ends.
   */
  holdStream(token: string, ip: string): () => void {
    const keys = [`t:${token}`, `a:${ip}`] as const;
    const caps = [LIVE_STREAMS.perToken, LIVE_STREAMS.perAddress];
    const over = keys.findIndex((key, i) => (this.streams.get(key) ?? 0) >= caps[i]!);
    if (over >= 0) {
      throw new RateLimitedError(
        LIVE_STREAMS.retryAfterS,
        `At most ${caps[over]} live checkout connections ${over === 0 ? 'per payment' : 'per address'} at once; close one first`,
      );
    }
    for (const key of keys) this.streams.set(key, (this.streams.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const left = (this.streams.get(key) ?? 1) - 1;
        if (left > 0) this.streams.set(key, left);
        else this.streams.delete(key);
      }
    };
  }

  /** Streams held open now, for a token or an address (what the tests read). */
  openStreams(token: string | null, ip: string | null): number {
    return this.streams.get(token !== null ? `t:${token}` : `a:${ip}`) ?? 0;
  }

  async consume(limiter: RateLimiterMemory, key: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw new RateLimitedError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      throw rejection;
    }
  }
}
