/**
 * Database faults (issue 7.4): a dedicated embedded PostgreSQL, a Kassa
 * web + worker child (`tsx server/main.ts`) on it, then PostgreSQL is
 * stopped and restarted on the same port while Kassa keeps running.
 *
 * While it is down: /ready and POST /v1/payments answer 503 problem+json
 * quickly (measured; no hang), /health stays 200, the process stays up.
 * Once it is back: /ready 200, payments are created, jobs run again (a
 * sandbox deposit is confirmed by the worker), and merchants who retried
 * during the outage are not locked out by the failed-authentication limits.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../db/client.js';
import { freePort, startEmbedded } from '../../db/embedded.js';
import { migrate } from '../../db/migrate.js';
import { createApiKey, createBusiness } from '../../server/modules/businesses/business.service.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { parseMasterKey } from '../../server/platform/secrets.js';
import { TEST_MASTER_KEY } from '../helpers/app.js';
import { problemViolation, startKassaChild, waitFor, type Kid } from './support.js';

/** A 503 must come back at least this fast (postgres.js connect_timeout is 5 s). */
const ANSWER_WITHIN_MS = 10_000;

let dir = '';
let port = 0;
let stopPostgres: (() => Promise<void>) | null = null;
let url = '';
let kassa: (Kid & { url: string }) | null = null;
let business = { businessId: '', apiKey: '', apiSecret: '' };
/** A second key of the same business: the merchant who keeps retrying during the outage. */
let retrier = { apiKey: '', apiSecret: '' };
/** Latency of every answer given while PostgreSQL was down. */
const outage: { what: string; status: number; ms: number }[] = [];

type Answer = { status: number; contentType: string; body: string; ms: number };

async function call(method: 'GET' | 'POST', path: string, options: { body?: string; who?: { apiKey: string; apiSecret: string } } = {}): Promise<Answer> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.who) headers.authorization = authorizationHeader(options.who.apiKey, options.who.apiSecret, { method, path, body: options.body ?? '' });
  let answer: Answer;
  try {
    const res = await fetch(`${kassa!.url}${path}`, { method, body: options.body, headers, signal: AbortSignal.timeout(30_000) });
    const body = await res.text();
    answer = { status: res.status, contentType: res.headers.get('content-type') ?? '', body, ms: performance.now() - started };
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') {
      // No connection at all: Kassa must stay up through the outage, so say how it ended, with its last output.
      const ended = kassa!.proc.exitCode ?? kassa!.proc.signalCode;
      throw new Error(`${method} ${path}: ${(error as Error).message}; Kassa ${ended === null ? 'still running' : `exited (${ended})`}; its output:\n${kassa!.output()}`, { cause: error });
    }
    // no answer within 30 s: recorded as status 0, so the checks below report it with its duration
    answer = { status: 0, contentType: '', body: 'no answer within 30 s', ms: performance.now() - started };
  }
  if (!stopPostgres) outage.push({ what: `${method} ${path.split('?')[0]}`, status: answer.status, ms: answer.ms });
  return answer;
}

const paymentBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ clientPaymentId: `dbf-${randomUUID()}`, businessId: business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '12.50', ...extra });

function expect503(a: Answer, what: string) {
  expect(a.status, `${what}: ${a.body}`).toBe(503);
  expect(problemViolation({ statusCode: a.status, headers: { 'content-type': a.contentType }, body: a.body }), `${what}: ${a.body}`).toBeNull();
  expect(a.ms, `${what} took ${Math.round(a.ms)} ms`).toBeLessThan(ANSWER_WITHIN_MS);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kassa-dbfault-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the directory.
  chmodSync(dir, 0o755);
  const pg = await startEmbedded(join(dir, 'data'), { persistent: true });
  port = pg.port;
  stopPostgres = pg.stop;
  url = pg.url('postgres');
  await migrate(url);
  const database = connect(url, { max: 2 });
  try {
    const created = await createBusiness(database.db, parseMasterKey(TEST_MASTER_KEY), { name: 'Outage shop' });
    business = { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret };
    retrier = await createApiKey(database.db, parseMasterKey(TEST_MASTER_KEY), created.business.id, ['CREATE_PAYMENT', 'READ_PAYMENT']);
  } finally {
    await database.close();
  }
  kassa = await startKassaChild(url, await freePort(), { role: 'all', env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '1' } });
}, 120_000);

afterAll(async () => {
  kassa?.kill();
  await kassa?.exited;
  await stopPostgres?.().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('PostgreSQL stopped and restarted under a running Kassa', () => {
  it('works before the outage', async () => {
    const created = await call('POST', '/v1/payments', { body: paymentBody(), who: business });
    expect(created.status, created.body).toBe(200);
    expect((await call('GET', '/ready')).status).toBe(200);
  });

  it('while PostgreSQL is down: /ready and POST /v1/payments answer 503 problem+json within seconds; /health stays 200', async () => {
    await stopPostgres!();
    stopPostgres = null;
    const timings: Record<string, number[]> = { ready: [], create: [], read: [] };
    for (let i = 0; i < 3; i++) {
      const ready = await call('GET', '/ready');
      expect503(ready, '/ready');
      timings.ready!.push(ready.ms);
      const created = await call('POST', '/v1/payments', { body: paymentBody(), who: business });
      expect503(created, 'POST /v1/payments');
      timings.create!.push(created.ms);
      const read = await call('GET', '/v1/payments?limit=1', { who: business });
      expect503(read, 'GET /v1/payments');
      timings.read!.push(read.ms);
    }
    const health = await call('GET', '/health');
    expect(health.status).toBe(200);
    expect(kassa!.proc.exitCode, kassa!.output()).toBeNull();
    const fmt = (ms: number[]) => ms.map((m) => Math.round(m)).join('/');
    process.stderr.write(`[db-faults] 503 answered in ms: ready ${fmt(timings.ready!)}, create ${fmt(timings.create!)}, read ${fmt(timings.read!)}\n`);
  });

  it('a longer outage (bursts of requests from many clients) still answers every request within 10 s', { timeout: 120_000 }, async () => {
    for (let wave = 0; wave < 3; wave++) {
      const answers = await Promise.all([
        ...Array.from({ length: 15 }, () => call('GET', '/ready')),
        ...Array.from({ length: 5 }, () => call('GET', '/v1/payments?limit=1', { who: business })),
      ]);
      for (const a of answers) expect([503, 0], a.body).toContain(a.status);
    }
    const slowest = [...outage].sort((a, b) => b.ms - a.ms).slice(0, 5);
    process.stderr.write(
      `[db-faults] ${outage.length} answers during the outage; median ${Math.round(outage.map((o) => o.ms).sort((a, b) => a - b)[Math.floor(outage.length / 2)]!)} ms; slowest ${slowest.map((o) => `${o.what} ${Math.round(o.ms)} ms`).join(', ')}\n`,
    );
    // postgres.js backs off reconnecting (up to 20 s by default): requests must not wait for it
    expect(slowest[0]!.ms, `${slowest[0]!.what} answered after ${Math.round(slowest[0]!.ms)} ms`).toBeLessThan(ANSWER_WITHIN_MS);
  });

  it('a merchant retrying 25 times during the outage gets 503s, not a lock-out', { timeout: 90_000 }, async () => {
    // the merchant's workers all retrying at once
    const statuses = (await Promise.all(Array.from({ length: 25 }, () => call('POST', '/v1/payments', { body: paymentBody(), who: retrier })))).map((a) => a.status);
    // 503 is the answer; a 429 would mean outage errors were counted as failed authentications
    expect(statuses.sort()).toEqual(Array(25).fill(503));
  });

  it('after PostgreSQL restarts on the same port, everything recovers without restarting Kassa', async () => {
    const pg = await startEmbedded(join(dir, 'data'), { persistent: true, port });
    stopPostgres = pg.stop;
    const restarted = performance.now();

    await waitFor(async () => (await call('GET', '/ready')).status === 200, 30_000, '/ready to answer 200 again');
    const readyAfterMs = Math.round(performance.now() - restarted);
    expect(kassa!.proc.exitCode, kassa!.output()).toBeNull();

    await waitFor(
      async () => {
        const res = await call('POST', '/v1/payments', { body: paymentBody(), who: business });
        return res.status === 200 ? res : null;
      },
      15_000,
      'a payment to be created after the restart',
    );

    // A job runs again: a sandbox deposit is confirmed by the worker after KASSA_SANDBOX_CONFIRM_DELAY_S=1.
    const crypto = await call('POST', '/v1/payments', { body: paymentBody({ displayCurrency: undefined, displayAmount: undefined, depositCurrency: 'BTC', depositAmount: '0.001', network: 'BTC' }), who: business });
    expect(crypto.status, crypto.body).toBe(200);
    const paymentId = JSON.parse(crypto.body).paymentInfo.paymentId as string;
    const deposit = await call('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, {
      body: JSON.stringify({ depositCurrency: 'BTC', network: 'BTC', amount: '0.001' }),
      who: business,
    });
    expect(deposit.status, deposit.body).toBe(200);
    const confirmedAfter = performance.now();
    await waitFor(
      async () => {
        const res = await call('GET', `/v1/payments/${paymentId}`, { who: business });
        return res.status === 200 && JSON.parse(res.body).status === 'DEPOSITED';
      },
      30_000,
      'the worker to confirm the sandbox deposit after the restart',
      200,
    );
    process.stderr.write(
      `[db-faults] /ready 200 ${readyAfterMs} ms after the restart; deposit confirmed by the worker ${Math.round(performance.now() - confirmedAfter)} ms after it was sent\n`,
    );
  });

  it('after the outage, the merchant who retried is served (no 429 left over from the 503s)', async () => {
    const res = await call('POST', '/v1/payments', { body: paymentBody(), who: retrier });
    expect(res.status, res.body).toBe(200);
  });
});
