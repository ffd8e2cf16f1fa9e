/**
 * The access log: at `info`, one line a request, written when it is answered, carrying the method,
 * the URL (checkout tokens masked), the status and the time taken; Fastify's "incoming request"
 * line is not written. A level above `info` writes none.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type KassaServer } from '../../server/edges/app.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const servers: KassaServer[] = [];

/** A server of the test app's deps whose log, at `level`, goes into `lines` (parsed). */
async function loggingServer(level: string, lines: Record<string, unknown>[]): Promise<KassaServer> {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const server = await createServer({ deps: { ...t.deps, config: { ...t.deps.config, logLevel: level as 'info' } }, logger: { stream } });
  await server.app.ready();
  servers.push(server);
  return server;
}

const createBody = () =>
  JSON.stringify({ clientPaymentId: `log-${Math.random()}`, businessId: t.business.businessId, locale: 'en-US', displayCurrency: 'EUR', displayAmount: '12.00' });

function signedCreate(server: KassaServer, body: string) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/payments',
    payload: body,
    headers: {
      'content-type': 'application/json',
      authorization: authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'POST', path: '/v1/payments', body, timestamp: Math.floor(t.clock.now().getTime() / 1000) }),
    },
  });
}

beforeAll(async () => {
  t = await startTestApp();
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  await t?.close();
});

describe('access log', () => {
  it('writes one line a request at info, with method, URL, status, time and request id', async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await loggingServer('info', lines);
    const created = await signedCreate(server, createBody());
    expect(created.statusCode).toBe(200);
    const missing = await server.app.inject({ method: 'GET', url: '/v1/payments/00000000-0000-4000-8000-000000000000' });
    expect(missing.statusCode).toBe(401);
    const page = await server.app.inject({ method: 'GET', url: '/checkout/not-a-real-token' });

    const access = lines.filter((line) => line.msg === 'request completed');
    expect(lines.filter((line) => line.msg === 'incoming request')).toEqual([]);
    expect(access).toHaveLength(3);
    expect(access.map((line) => [(line.req as { method: string }).method, (line.req as { url: string }).url, (line.res as { statusCode: number }).statusCode])).toEqual([
      ['POST', '/v1/payments', 200],
      ['GET', '/v1/payments/00000000-0000-4000-8000-000000000000', 401],
      ['GET', '/checkout/…', page.statusCode],
    ]);
    for (const line of access) {
      expect(line.level).toBe(30);
      expect(typeof line.responseTime).toBe('number');
      expect(line.responseTime as number).toBeGreaterThanOrEqual(0);
      expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/);
    }
    // The answer's x-request-id is the line's reqId, so a merchant's report finds the line.
    expect(access[0]!.reqId).toBe(created.headers['x-request-id']);
    // No line holds the API secret or the Authorization header.
    expect(JSON.stringify(lines)).not.toContain(t.business.apiSecret);
    expect(JSON.stringify(lines)).not.toContain('KASSA-API');
  });

  it('writes no access line at warn', async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await loggingServer('warn', lines);
    expect((await signedCreate(server, createBody())).statusCode).toBe(200);
    expect(lines).toEqual([]);
  });
});
