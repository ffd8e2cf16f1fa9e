/** Operational routes without authentication (CONTRACT §4): liveness, readiness, the OpenAPI document and the reference page. */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { KassaError } from '../../platform/errors.js';
import { DOCS_HTML } from './docs.js';
import { defineRoute, type AnyRoute } from './route.js';

export const HealthSchema = z.strictObject({ status: z.literal('ok') });
const NetworkReadySchema = z.strictObject({
  height: z.number().int().nullable().describe("the scanner's cursor: the highest block scanned"),
  tip: z.number().int().nullable().describe("the node's best block, when it answered"),
  lag: z.number().int().nullable(),
  ok: z.boolean().describe('the node answered just now'),
  error: z.string().optional(),
});

export const ReadySchema = z.strictObject({
  status: z.enum(['ready', 'not_ready']).describe('not_ready (with 503) while a configured node does not answer'),
  database: z.literal('up'),
  sanctions: z.string().describe('"sandbox", or the state of the sanctions list in live mode ("missing" until one is imported)'),
  networks: z.record(z.string(), NetworkReadySchema).optional().describe('Live mode: each configured network'),
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
      summary: 'Readiness: the database answers (live: and every configured node)',
      auth: 'NONE',
      response: ReadySchema,
      errors: [
        { status: 503, code: 'NOT_READY', when: 'the database is unreachable (Retry-After)' },
      ],
      handler: async ({ reply }) => {
        try {
          await deps.database.db.execute(sql`select 1`);
        } catch {
          throw new KassaError(503, 'NOT_READY', 'The database is unreachable.', [], { 'retry-after': '5' });
        }
        // Live mode: a missing sanctions list is shown (deposits wait in review meanwhile), not fatal.
        const sanctions = deps.live ? await deps.live.sanctions() : 'sandbox';
        if (!deps.chainHealth) return { status: 'ready' as const, database: 'up' as const, sanctions };
        // Live: every configured node must answer (503 with the same body otherwise); deposits are delayed meanwhile, not lost.
        const health = await deps.chainHealth();
        const networks = Object.fromEntries(
          Object.entries(health).map(([network, h]) => [network, { height: h.height, tip: h.tip, lag: h.lag, ok: h.ok, ...(h.error ? { error: h.error } : {}) }]),
        );
        const ready = Object.values(health).every((h) => h.ok);
        if (!ready) reply.code(503).header('retry-after', '5');
        return { status: ready ? ('ready' as const) : ('not_ready' as const), database: 'up' as const, sanctions, networks };
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
