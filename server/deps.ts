/**
 * What the services need from the outside world, injected once: the
 * database, the master key, rates, the chain and the clock. Tests build it
 * with their own database and clock.
 */
import type { Database } from '../db/client.js';
import type { ChainAdapter } from './modules/networks/ports.js';
import type { AmlProvider } from './adapters/screening/sandbox.js';
import type { CallbackSender } from './adapters/callbacks/http-transport.js';
import type { RateLimits } from './platform/rate-limit.js';
import type { Config } from './platform/config.js';
import type { RatesProvider } from './adapters/rates/sandbox.js';
import type { MasterKey } from './platform/secrets.js';

export type Deps = {
  config: Config;
  database: Database;
  masterKey: MasterKey;
  rates: RatesProvider;
  chain: ChainAdapter;
  aml: AmlProvider;
  callbacks: CallbackSender;
  /** Per-process rate limits (authentication failures, checkout). */
  limits: RateLimits;
  /** The clock. Injected so expiry and retry schedules are testable without sleeping. */
  now: () => Date;
};
