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
  };
