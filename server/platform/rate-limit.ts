/**
 * Rate limits (rate-limiter-flexible). In memory per process: with N web
 * processes behind a load balancer a client gets at most N× the budget,
 * which is acceptable for abuse protection; a shared store
 * (RateLimiterPostgres) is the drop-in for a strict global limit.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { KassaError } from './errors.js';

export class RateLimitedError extends KassaError {
  constructor(retryAfterS: number) {
    super(429, 'RATE_LIMITED', `Too many requests; retry in ${retryAfterS} s.`, [], { 'retry-after': String(retryAfterS) });
  }
}

export class RateLimits {
  /** A checkout's own token: one customer's page, reconnecting and polling at most this often. */
  readonly checkoutToken = new RateLimiterMemory({ points: 120, duration: 60 });
  /** One address, across tokens: stops enumeration of checkout tokens. */
  readonly checkoutIp = new RateLimiterMemory({ points: 600, duration: 60 });

  /** Failed authentications per API key: a brute force on one key stops after 20 a minute. */
  readonly authFailuresKey = new RateLimiterMemory({ points: 20, duration: 60, blockDuration: 60 });
  /** Failed authentications per client address, across keys. */
  readonly authFailuresIp = new RateLimiterMemory({ points: 60, duration: 60, blockDuration: 60 });

  /** Refuse (429) a client whose failures are over the limit, before even checking its signature. */
  async assertNotBlocked(ip: string, apiKey: string | null): Promise<void> {
    const checks: [RateLimiterMemory, string | null][] = [[this.authFailuresIp, ip], [this.authFailuresKey, apiKey]];
    for (const [limiter, key] of checks) {
      if (!key) continue;
      const state = await limiter.get(key);
      if (state && state.remainingPoints <= 0) throw new RateLimitedError(Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
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
