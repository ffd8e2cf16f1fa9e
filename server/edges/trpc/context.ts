/**
 * tRPC context. `createContextInner` holds what procedures need and is what
 * tests call directly; `createContext` only extracts the operator from the
 * HTTP request's bearer token.
 */
import type { CreateFastifyContextOptions } from '@trpc/server/adapters/fastify';
import { findOperatorByToken, type OperatorRole } from '../../modules/businesses/index.js';
import type { Deps } from '../../deps.js';
import type { LiveUpdates } from '../../modules/payments/index.js';
import type { RateLimits } from '../../platform/rate-limit.js';

export type Operator = { id: string; name: string; role: OperatorRole };

export type Context = {
  deps: Deps;
  operator: Operator | null;
  ip: string | null;
  /** Web processes only: change notifications for checkout subscriptions. */
  live: LiveUpdates | null;
  limits: RateLimits | null;
};

export function createContextInner(opts: Partial<Context> & { deps: Deps }): Context {
  return { deps: opts.deps, operator: opts.operator ?? null, ip: opts.ip ?? null, live: opts.live ?? null, limits: opts.limits ?? null };
}

export function contextFactory(deps: Deps) {
  return async ({ req }: CreateFastifyContextOptions): Promise<Context> => {
    const header = req.headers.authorization;
    const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : null;
    const row = token && token.length <= 200 ? await findOperatorByToken(deps.database.db, token) : null;
    const operator = row ? { id: row.id, name: row.name, role: row.role as OperatorRole } : null;
    return createContextInner({ deps, operator, ip: req.ip });
  };
}

/** The checkout's context: no operator, ever; the client's address for rate limits. */
export function checkoutContextFactory(deps: Deps, live: LiveUpdates, limits: RateLimits) {
  return async ({ req }: CreateFastifyContextOptions): Promise<Context> => createContextInner({ deps, ip: req.ip, live, limits });
}
