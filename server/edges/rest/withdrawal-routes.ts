/** REST routes of withdrawals and whitelisted addresses (CONTRACT §4, §6). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { requireApiKey } from './auth.js';
import { parseInput } from '../../platform/validate.js';
import { CreateWithdrawalSchema } from '../../modules/withdrawals/index.js';
import { addWhitelisted, CreateWhitelistSchema, listWhitelisted, removeWhitelisted } from '../../modules/withdrawals/index.js';
import { WITHDRAWAL_STATUSES } from '../../modules/withdrawals/index.js';
import { createWithdrawal, getWithdrawal, listWithdrawals } from '../../modules/withdrawals/index.js';
// The sandbox's forced outcome broadcasts like the job does: the one edge allowed a *.job.ts (.dependency-cruiser.cjs).
import { forceOutcome } from '../../modules/withdrawals/withdrawal-broadcast.job.js';

export const ListWithdrawalsQuerySchema = z.object({
  status: z.enum(WITHDRAWAL_STATUSES).optional(),
  clientWithdrawalId: z.string().min(1).max(255).regex(/^[^\p{Cc}]+$/u, 'must not contain control characters').optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(200).optional(),
});

export const OutcomeSchema = z.object({ status: z.enum(['COMPLETED', 'FAILED', 'BLOCKED']) });

export function withdrawalRoutes(app: FastifyInstance, deps: Deps): void {
  app.post('/v1/withdrawals', { preHandler: requireApiKey(deps, 'CREATE_WITHDRAWAL') }, async (request) =>
    createWithdrawal(deps, request.caller!, parseInput(CreateWithdrawalSchema, request.body, 'withdrawal request')),
  );
  app.get<{ Params: { withdrawalId: string } }>(
    '/v1/withdrawals/:withdrawalId',
    { preHandler: requireApiKey(deps, 'READ_WITHDRAWAL') },
    async (request) => getWithdrawal(deps, request.caller!.businessId, request.params.withdrawalId),
  );
  app.get('/v1/withdrawals', { preHandler: requireApiKey(deps, 'READ_WITHDRAWAL') }, async (request) =>
    listWithdrawals(deps, request.caller!.businessId, parseInput(ListWithdrawalsQuerySchema, request.query, 'query')),
  );

  app.post('/v1/whitelisted-addresses', { preHandler: requireApiKey(deps, 'MANAGE_WHITELIST') }, async (request) =>
    addWhitelisted(deps, request.caller!.businessId, parseInput(CreateWhitelistSchema, request.body, 'whitelisted address')),
  );
  app.get('/v1/whitelisted-addresses', { preHandler: requireApiKey(deps, 'MANAGE_WHITELIST') }, async (request) =>
    listWhitelisted(deps, request.caller!.businessId),
  );
  app.delete<{ Params: { id: string } }>(
    '/v1/whitelisted-addresses/:id',
    { preHandler: requireApiKey(deps, 'MANAGE_WHITELIST') },
    async (request) => removeWhitelisted(deps, request.caller!.businessId, request.params.id),
  );

  if (deps.config.sandbox) {
    app.post<{ Params: { withdrawalId: string } }>(
      '/v1/test-helpers/withdrawals/:withdrawalId/outcome',
      { preHandler: requireApiKey(deps, 'CREATE_WITHDRAWAL') },
      async (request) =>
        forceOutcome(deps, deps.chains, request.caller!.businessId, request.params.withdrawalId, parseInput(OutcomeSchema, request.body, 'outcome').status),
    );
  }
}
