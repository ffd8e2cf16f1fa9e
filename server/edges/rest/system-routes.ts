/** Operational routes without authentication (CONTRACT §4): liveness, readiness, the OpenAPI document and the reference page. */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { KassaError } from '../../platform/errors.js';
import { DOCS_HTML } from './docs.js';
import { defineRoute, type AnyRoute } from './route.js';

export const HealthSchema = z.strictObject({ status: z.literal('ok') });
export const ReadySchema = z.strictObject({
  status: z.literal('ready'),
  database: z.literal('up'),
  sanctions: z.string().describe('"sandbox", or the state of the sanctions list in live mode ("missing" until one is imported)'),
});

/** `document` is filled once the whole table is known (it describes these routes too). */
export function systemRoutes(deps: Deps, openApi: () => Record<string, unknown>): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      operationId: 'health',
      tag: 'Operations',
      summary: 'Liveness',
      auth: 'NONE',
      response: HealthSchema,
      handler: async () => ({ status: 'ok' as const }),
    }),
    defineRoute({
      method: 'GET',
      path: '/ready',
      operationId: 'ready',
      tag: 'Operations',
      summary: 'Readiness: the database answers',
      auth: 'NONE',
      response: ReadySchema,
      errors: [{ status: 503, code: 'NOT_READY', when: 'the database is unreachable (Retry-After)' }],
      handler: async () => {
        try {
          await deps.database.db.execute(sql`select 1`);
        } catch {
          throw new KassaError(503, 'NOT_READY', 'The database is unreachable.', [], { 'retry-after': '5' });
        }
        // Live mode: a missing sanctions list is shown (deposits wait in review meanwhile), not fatal.
        const sanctions = deps.live ? await deps.live.sanctions() : 'sandbox';
        return { status: 'ready' as const, database: 'up' as const, sanctions };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'openapi',
      tag: 'Operations',
      summary: 'This OpenAPI 3.1 document',
      auth: 'NONE',
      response: z.record(z.string(), z.unknown()),
      handler: async () => openApi(),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs',
      operationId: 'docs',
      tag: 'Operations',
      summary: 'The rendered API reference (HTML)',
      auth: 'NONE',
      response: z.string(),
      responseType: 'text/html',
      handler: async ({ reply }) => {
        reply.type('text/html; charset=utf-8');
        return DOCS_HTML;
      },
    }),
  ];
}
