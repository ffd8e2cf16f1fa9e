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
 * /docs): per API key and per client address, failures counted over a
 * window; at the limit every request of that key or address is 429 with
 * Retry-After until the lock ends. Successes are not counted.
 */
export const AUTH_LOCKOUT = { perKey: 20, perAddress: 60, windowS: 60, lockS: 60 } as const;

export class RateLimits {
  /** A checkout's own token: one customer's page, reconnecting and polling at most this often. */
  readonly checkoutToken = new RateLimiterMemory({ points: 120, duration: 60 });
  /** One address, across tokens: stops enumeration of checkout tokens. */
  readonly checkoutIp = new RateLimiterMemory({ points: 600, duration: 60 });

  /** Failed authentications per API key: a brute force on one key stops after 20 a minute. */
  readonly authFailuresKey = new RateLimiterMemory({ points: AUTH_LOCKOUT.perKey, duration: AUTH_LOCKOUT.windowS, blockDuration: AUTH_LOCKOUT.lockS });
  /** Failed authentications per client address, across keys. */
  readonly authFailuresIp = new RateLimiterMemory({ points: AUTH_LOCKOUT.perAddress, duration: AUTH_LOCKOUT.windowS, blockDuration: AUTH_LOCKOUT.lockS });

  /** Refuse (429) a client whose failures are over the limit, before even checking its signature. */
  async assertNotBlocked(ip: string, apiKey: string | null): Promise<void> {
    const checks: [RateLimiterMemory, string | null, string][] = [
      [this.authFailuresIp, ip, `${AUTH_LOCKOUT.perAddress} failed authentications from this address`],
      [this.authFailuresKey, apiKey, `${AUTH_LOCKOUT.perKey} failed authentications for this API key`],
    ];
    for (const [limiter, key, what] of checks) {
      if (!key) continue;
      const state = await limiter.get(key);
      if (state && state.remainingPoints <= 0) {
        // Says which limit, never whether the key exists or the last guess was right.
        throw new RateLimitedError(
          Math.max(1, Math.ceil(state.msBeforeNext / 1000)),
          `Locked out: ${what} within ${AUTH_LOCKOUT.windowS} s lock it for ${AUTH_LOCKOUT.lockS} s (correctly signed requests too)`,
        );
      }
    }
  }

  async recordAuthFailure(ip: string, apiKey: string | null): Promise<void> {
    await this.authFailuresIp.penalty(ip, 1);
    if (apiKey) await this.authFailuresKey.penalty(apiKey, 1);
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
