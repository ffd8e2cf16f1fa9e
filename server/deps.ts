/**
 * Everything the composition root (server/compose.ts) builds, as one bag:
 * each module's own deps (its ports, the database, config, master key,
 * clock), the chains (reached only by jobs), the sandbox faucet and the
 * edges' rate limits. Edges and jobs take this; modules never import it —
 * each declares the narrower type it needs in its ports.ts.
 */
import type { BusinessesDeps } from './modules/businesses/index.js';
import type { CallbacksDeps } from './modules/callbacks/index.js';
import type { DepositsDeps, SandboxFaucet } from './modules/deposits/index.js';
import type { ChainPorts } from './modules/networks/ports.js';
import type { Network } from './modules/money/index.js';
import type { ChainHealth } from './modules/networks/index.js';
import type { WithdrawalsDeps } from './modules/withdrawals/index.js';
import type { RateLimits } from './platform/rate-limit.js';

export type Deps = DepositsDeps &
  WithdrawalsDeps &
  CallbacksDeps &
  BusinessesDeps & {
    /** One chain per network; only jobs call them (network I/O stays outside transactions). */
    chains: ChainPorts;
    /** Sandbox only: simulated deposits. */
    faucet: SandboxFaucet | null;
    /** Per-process rate limits (authentication failures, checkout). */
    limits: RateLimits;
    /** Live mode: the market rates' and sanctions lists' state (GET /v1/rates, /ready); null in sandbox. */
    live: LiveStatus | null;
    /** Work a worker process runs in the background (the rates refresher, chain scanners); started by main.ts. */
    background: Background[];
    /** Live mode: each configured network's scanner height, node tip and lag (/ready, /metrics); null in sandbox. */
    chainHealth: (() => Promise<Partial<Record<Network, ChainHealth>>>) | null;
  };


export type LiveStatus = {
  /** Per rate source: the age of its newest quote and its last error. */
  rates: () => Promise<{ minSources: number; maxAgeS: number; sources: { name: string; ageS: number | null; fresh: boolean; lastError: string | null }[] }>;
  /** "ok" once every configured list is imported; "missing" while `ofac` has none yet. */
  sanctions: () => Promise<'ok' | 'missing'>;
};

export type Background = {
  name: string;
  /** Started in a web process too (the rest run in workers and signers only). */
  web?: boolean;
  start: () => void;
  stop: () => Promise<void>;
  /** One round now, awaited (tests, and an operator's manual refresh). */
  runOnce: () => Promise<unknown>;
};
