/**
 * SSRF and egress (issue 7.6), end to end — what test/adapters/callbacks/http-transport.unit
 * does not cover: outside sandbox (KASSA_SANDBOX=false, no
 * KASSA_ALLOW_PRIVATE_CALLBACK_URLS) a business whose callback URL points at
 * loopback or the cloud metadata address gets a real withdrawal outcome
 * through the real worker, yet no request ever reaches the target, and every
 * attempt is logged with a refusal error (visible to operators).
 */
import { createServer, type Server } from 'node:http';
import { eq, sql } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackAttempts, callbackDeliveries } from '../../db/schema.js';
import { createOperator } from '../../server/modules/businesses/business.service.js';
import { postEntries } from '../../server/modules/ledger/ledger.service.js';
import { appRouter } from '../../server/edges/trpc/app-router.js';
import { createContextInner } from '../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../server/edges/trpc/init.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { watchOnlyChains } from '../helpers/watch-only.js';
import { sandboxChains } from '../../server/adapters/chain/sandbox.js';
import { SandboxRates } from '../../server/adapters/rates/sandbox.js';
import { SandboxScreening } from '../../server/adapters/screening/sandbox.js';
import { startTestWorker } from '../helpers/worker.js';
import { waitFor } from './support.js';

const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

let t: TestApp;
let worker: Runner | null = null;
const servers: Server[] = [];
const hits: string[] = [];
let port4 = 0;
let port6 = 0;

function listen(host: string): Promise<number> {
  const server = createServer((req, res) => {
    hits.push(`${host} ${req.method} ${req.url}`);
    res.writeHead(200).end('ok');
  });
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as { port: number }).port));
  });
}

beforeAll(async () => {
  port4 = await listen('127.0.0.1');
  port6 = await listen('::1').catch(() => 0); // no IPv6 loopback on this machine: that case is skipped
  t = await startTestApp({
    env: { KASSA_SANDBOX: 'false', KASSA_SANDBOX_BROADCAST_DELAY_S: '0', KASSA_CALLBACK_RETRY_INTERVAL_S: '1', KASSA_CALLBACK_TIMEOUT_MS: '3000' },
    live: watchOnlyChains(['BTC', 'ETH']),
  });
  // Real time: the worker runs jobs when they are due by the database clock.
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
  expect(t.deps.config.sandbox).toBe(false);
  expect(t.deps.config.allowPrivateCallbackUrls).toBe(false);
  // This file is about egress: fixed rates and scripted screening (the sandbox's adapters) stand in
  // for the live market sources, which would need their own doubles (test/edges/rest/live-market).
  t.deps.rates = new SandboxRates();
  t.deps.screening = new SandboxScreening();
  // And the sandbox chain completes the withdrawals whose callbacks are the egress under test.
  t.deps.chains = sandboxChains(t.db, t.clock.now);
  worker = await startTestWorker(t.deps);
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const targets = () =>
  [
    ['an IPv4 loopback literal', `http://127.0.0.1:${port4}/hook`],
    ['a name resolving to loopback', `http://localhost:${port4}/hook`],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
    ['an IPv4-mapped IPv6 loopback', `http://[::ffff:127.0.0.1]:${port4}/hook`],
    ...(port6 ? [['the IPv6 loopback literal', `http://[::1]:${port6}/hook`]] : []),
  ] as [string, string][];

describe('outside sandbox, callbacks to private addresses are refused and logged', () => {
  it('no request reaches loopback, [::1] or 169.254.169.254; each attempt is logged with a refusal', { timeout: 60_000 }, async () => {
    const cases = targets();
    const operator = await createOperator(t.db.db, 'sec', 'admin');
    const trpc = createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: operator.operatorId, name: 'sec', role: 'admin' } }));
    const deliveries: { what: string; url: string; deliveryId: string }[] = [];

    for (const [what, url] of cases) {
      const b = await t.addBusiness({ name: what, withdrawalCallbackUrl: url, paymentCallbackUrl: url });
      await postEntries(t.db.db, [{ businessId: b.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000.00', kind: 'TEST' }], new Date());
      const res = await t.signed('POST', '/v1/withdrawals', { clientWithdrawalId: `ssrf-${deliveries.length}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.001' }, b);
      expect(res.statusCode, res.body).toBe(200);
      const withdrawalId = res.json().withdrawalId as string;
      // the worker broadcasts it (COMPLETED) and records a callback delivery in the same transaction
      const delivery = await waitFor(
        async () => (await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, withdrawalId)))[0],
        15_000,
        `the callback delivery for ${what}`,
      );
      deliveries.push({ what, url, deliveryId: delivery.id });
    }

    // at least two attempts each (the first and a retry one interval later), all refused
    for (const d of deliveries) {
      const attempts = await waitFor(
        async () => {
          const rows = await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, d.deliveryId)).orderBy(callbackAttempts.attempt);
          return rows.length >= 2 ? rows : null;
        },
        20_000,
        `two logged attempts for ${d.what}`,
      );
      for (const a of attempts) {
        expect(a.statusCode, d.what).toBeNull();
        expect(a.error ?? '', `${d.what}: ${a.error}`).toMatch(/private|refused/i);
        // refused before connecting: not a timeout after KASSA_CALLBACK_TIMEOUT_MS
        expect(a.error ?? '', d.what).not.toMatch(/timeout/i);
        expect(a.latencyMs, d.what).toBeLessThan(2000);
      }
      // operators see the same refusals
      const viaTrpc = await trpc.callbacks.attempts({ deliveryId: d.deliveryId });
      expect(viaTrpc.length).toBeGreaterThanOrEqual(2);
      expect(viaTrpc.every((a) => /private|refused/i.test(a.error ?? ''))).toBe(true);
    }
    const [pending] = (await t.db.db.execute(sql`select count(*)::int as n from callback_deliveries where status = 'DELIVERED'`)) as unknown as [{ n: number }];
    expect(pending.n).toBe(0);
    expect(hits).toEqual([]);
  });
});
