/** Internal tRPC procedures for API keys (CONTRACT §8): create (secret shown once), list, revoke. */
import { and, desc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { apiKeys } from '../../../db/schema.js';
import { notFound } from '../../platform/errors.js';
import { forgetSecret } from '../../platform/secret-cache.js';
import { SCOPES } from '../../modules/money/index.js';
import { adminProcedure, operatorProcedure, router } from './init.js';
import { createApiKey, getBusiness } from '../../modules/businesses/index.js';
import { unixTimes } from '../unix-times.rules.js';

export const apiKeyRouter = router({
  create: adminProcedure
    .input(z.strictObject({ businessId: z.guid(), scopes: z.array(z.enum(SCOPES)).min(1) }))
    .mutation(async ({ ctx, input }) => {
      await getBusiness(ctx.deps.database.db, input.businessId);
      return createApiKey(ctx.deps.database.db, ctx.deps.masterKey, input.businessId, [...new Set(input.scopes)]);
    }),
  /** Keys of a business, never their secrets. */
  list: operatorProcedure.input(z.strictObject({ businessId: z.guid() })).query(async ({ ctx, input }) =>
    unixTimes(await ctx.deps.database.db
      .select({ apiKeyId: apiKeys.id, apiKey: apiKeys.key, scopes: apiKeys.scopes, revokedAt: apiKeys.revokedAt, createdAt: apiKeys.createdAt })
      .from(apiKeys)
      .where(eq(apiKeys.businessId, input.businessId))
      .orderBy(desc(apiKeys.createdAt))),
  ),
  /** Revoked keys are refused from the next request on (the key row is read on every request; only the decrypted secret is cached, and dropped here). */
  revoke: adminProcedure.input(z.strictObject({ apiKeyId: z.guid() })).mutation(async ({ ctx, input }) => {
    const [row] = await ctx.deps.database.db
      .update(apiKeys)
      .set({ revokedAt: ctx.deps.now() })
      .where(and(eq(apiKeys.id, input.apiKeyId), isNull(apiKeys.revokedAt)))
      .returning({ apiKeyId: apiKeys.id, revokedAt: apiKeys.revokedAt, secretEnc: apiKeys.secretEnc });
    if (!row) throw notFound(`Active API key ${input.apiKeyId} not found.`);
    forgetSecret(ctx.deps.masterKey, row.secretEnc);
    return unixTimes({ apiKeyId: row.apiKeyId, revokedAt: row.revokedAt });
  }),
});
