/**
 * The route table's mounting (route.ts) on a bare Fastify: strict parsing of
 * path, query and body, the empty-parameter 404, and the response check that
 * every test server runs, shown to fail on an answer outside its schema.
 */
import Fastify from 'fastify';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineRoute, registerRoutes } from '../../../server/edges/rest/route.js';
import { registerProblemHandlers } from '../../../server/edges/rest/problem.js';
import type { Deps } from '../../../server/deps.js';

async function appWith(answer: unknown, checkResponses: boolean) {
  const app = Fastify();
  registerProblemHandlers(app);
  registerRoutes(
    app,
    {} as Deps,
    [
      defineRoute({
        method: 'GET',
        path: '/things/:thingId',
        operationId: 'thing',
        tag: 'Test',
        summary: 'A thing',
        auth: 'NONE',
        params: z.strictObject({ thingId: z.string() }),
        query: z.strictObject({ verbose: z.enum(['true', 'false']).optional() }),
        response: z.strictObject({ id: z.string(), at: z.int() }),
        handler: async () => answer,
      }),
    ],
    { checkResponses },
  );
  await app.ready();
  return app;
}

describe('registerRoutes', () => {
  it('an answer in its schema passes the check', async () => {
    const app = await appWith({ id: 'a', at: 1700000000 }, true);
    expect((await app.inject({ method: 'GET', url: '/things/a' })).statusCode).toBe(200);
  });

  it('an answer outside its schema is a 500 RESPONSE_CONTRACT_VIOLATION naming the field, when checked', async () => {
    // A Date crosses the wire as an ISO string, not the UNIX seconds the schema promises.
    const app = await appWith({ id: 'a', at: new Date(0), extra: true }, true);
    const res = await app.inject({ method: 'GET', url: '/things/a' });
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('RESPONSE_CONTRACT_VIOLATION');
    expect(res.json().detail).toContain('"field":"at"');
    expect(res.json().detail).toContain('"field":"extra"');
    // Unchecked (production), the same answer goes out as it is.
    const unchecked = await appWith({ id: 'a', at: new Date(0) }, false);
    expect((await unchecked.inject({ method: 'GET', url: '/things/a' })).statusCode).toBe(200);
  });

  it('an unknown query parameter is a 400 naming it', async () => {
    const app = await appWith({ id: 'a', at: 1 }, true);
    const res = await app.inject({ method: 'GET', url: '/things/a?verbose=true&verbos=1' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'verbos', message: expect.stringContaining('unknown field') }]);
  });

  it('an empty path parameter is a 404 saying which one is missing', async () => {
    const app = await appWith({ id: 'a', at: 1 }, true);
    const res = await app.inject({ method: 'GET', url: '/things/' });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toBe('GET /things/ names no thingId: use /things/{thingId} to read one, or /things to list.');
  });
});
