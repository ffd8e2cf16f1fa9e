/**
 * What every module is given by the composition root, besides the database
 * and its own ports: the configuration, the master key, the clock and the logger.
 */
import type { Config } from './config.js';
import type { Log } from './logger.js';
import type { MasterKey } from './secrets.js';

/** The clock. Injected so expiry and retry schedules are testable without sleeping. */
export type Clock = () => Date;

export type PlatformDeps = {
  config: Config;
  masterKey: MasterKey;
  now: Clock;
  /** The process's logger (pino), shared by the HTTP server and the worker. */
  log: Log;
};
