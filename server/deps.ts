/**
 * What the services need from the outside world, injected once: the
 * database, the master key, rates, the chain and the clock. Tests build it
 * with their own database and clock.
 */
import type { Database } from '../db/client.js';
import type { ChainAdapter } from './chain/adapter.js';
import type { AmlProvider } from './compliance/aml.js';
import type { CallbackSender } from './callbacks/egress.js';
import type { RateLimits } from './http/rate-limit.js';
import type { Config } from './config.js';
import type { RatesProvider } from './money/rates.js';
import type { MasterKey } from './security/secrets.js';
import type { Log } from './logger.js';

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
  /** The process's logger (pino), shared by the HTTP server and the worker. */
  log: Log;
  /** The clock. Injected so expiry and retry schedules are testable without sleeping. */
  now: () => Date;
};
