/**
 * Rate limits (rate-limiter-flexible). In memory per process: with N web
 * processes behind a load balancer a client gets at most N× the budget,
 * which is acceptable for abuse protection; a shared store
 * (RateLimiterPostgres) is the drop-in for a strict global limit.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { KassaError } from '../errors.js';

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

  async consume(limiter: RateLimiterMemory, key: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw new RateLimitedError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      throw rejection;
    }
  }
}
