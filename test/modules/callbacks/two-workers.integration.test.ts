/**
 * Two worker runners on one database (CONTRACT §1: any number of workers)
 * delivering 50 callbacks: every callback is sent exactly once and logged
 * as exactly one attempt, whichever runner took it.
 */
import { eq, inArray, sql } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callbackAttempts, callbackDeliveries } from '../../../db/schema.js';
import type { CallbackSender } from '../../../server/adapters/callbacks/http-transport.js';
import { verifyCallback } from '../../../server/modules/callbacks/signing.js';
import { attemptClaimed, attemptDelivery, claimDue, enqueueCallback } from '../../../server/modules/callbacks/delivery.service.js';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../../server/deps.js';
import { postEntries } from '../../../server/modules/ledger/ledger.service.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';
import { headersOf, Receiver, sleep } from './receiver.js';

const N = 50;
let t: TestApp;
const runners: Runner[] = [];
const sentBy = { a: 0, b: 0 };
const rx = new Receiver();

/** The same deps, with a sender that counts what this runner sent. */
function countingDeps(which: 'a' | 'b'): Deps {
  const sender = t.deps.callbacks;
  const counting = {
    post: (...args: Parameters<CallbackSender['post']>) => {
      sentBy[which]++;
      return sender.post(...args);
    },
    close: () => Promise.resolve(),
  } as unknown as CallbackSender;
  return { ...t.deps, callbacks: counting };
}

beforeAll(async () => {
  await rx.start();
  // a little latency, so that both runners have callbacks in flight at once
  rx.on('/many', (_n, _req, res) => setTimeout(() => res.writeHead(200).end(), 20));
  t = await startTestApp({
    env: { KASSA_CALLBACK_RETRY_INTERVAL_S: '1', KASSA_SANDBOX_BROADCAST_DELAY_S: '0' },
    business: { withdrawalCallbackUrl: rx.url('/many') },
  });
  // Real time: job run_at times follow the database clock.
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
});
afterAll(async () => {
  for (const r of runners) await r.stop();
  await t?.close();
  await rx.stop();
});

it(`delivers ${N} callbacks with two runners: each exactly once, one attempt each`, async () => {
  const b = t.business;
  await postEntries(t.db.db, [{ businessId: b.businessId, account: 'MERCHANT', currency: 'EUR', amount: '100000.00', kind: 'TEST' }], new Date());
  const created = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      t.signed('POST', '/v1/withdrawals', {
        clientWithdrawalId: `many-${i}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC',
        address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: '0.001',
      }),
    ),
  );
  for (const r of created) expect(r.statusCode, r.body).toBe(200);
  const withdrawalIds = created.map((r) => r.json().withdrawalId as string);

  // both runners start on the queued work at once
  runners.push(...(await Promise.all([startTestWorker(countingDeps('a')), startTestWorker(countingDeps('b'))])));

  await eventually(async () => {
    const [row] = await t.db.db
      .select({ n: sql<number>`count(*)::int` })
      .from(callbackDeliveries)
      .where(sql`${callbackDeliveries.businessId} = ${b.businessId} and ${callbackDeliveries.status} = 'DELIVERED'`);
    return row!.n === N;
  }, 30_000, `${N} delivered callbacks`);
  // one more interval: a duplicate or a stray retry would show up now
  await sleep(1300);

  const deliveries = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.businessId, b.businessId));
  expect(deliveries).toHaveLength(N);
  expect(new Set(deliveries.map((d) => d.subjectId))).toEqual(new Set(withdrawalIds));

  const hits = rx.hitsFor('/many');
  expect(hits).toHaveLength(N);
  const perId = new Map<string, number>();
  for (const h of hits) perId.set(String(h.headers['webhook-id']), (perId.get(String(h.headers['webhook-id'])) ?? 0) + 1);
  expect(perId.size).toBe(N);
  expect([...perId.values()].every((n) => n === 1)).toBe(true);
  expect(new Set(perId.keys())).toEqual(new Set(deliveries.map((d) => d.webhookId)));
  for (const h of hits) expect(verifyCallback(b.callbackSecret, headersOf(h), h.body).status).toBe('COMPLETED');

  const attempts = await t.db.db.select().from(callbackAttempts).where(inArray(callbackAttempts.deliveryId, deliveries.map((d) => d.id)));
  expect(attempts).toHaveLength(N);
  expect(attempts.every((a) => a.attempt === 1 && a.statusCode === 200)).toBe(true);

  expect(sentBy.a + sentBy.b).toBe(N);
  expect(sentBy.a).toBeGreaterThan(0);
  expect(sentBy.b).toBeGreaterThan(0);
});

it('one delivery attempted by two runs at once: the lease lets one claim and send it, the other is SKIPPED without sending', async () => {
  const hitsBefore = rx.hitsFor('/many').length;
  // Due an hour from now, so that only the two runs below attempt it.
  const id = await t.db.db.transaction((tx) =>
    enqueueCallback(tx, { businessId: t.business.businessId, kind: 'WITHDRAWAL', subjectId: randomUUID(), url: rx.url('/many'), body: { race: true } }, new Date(Date.now() + 3_600_000)),
  );
  const outcomes = await Promise.all([attemptDelivery(t.deps, id), attemptDelivery(t.deps, id)]);
  expect(outcomes.sort()).toEqual(['DELIVERED', 'SKIPPED']);
  const attempts = await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, id));
  expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
  const [delivery] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, id));
  expect([delivery!.status, delivery!.attempts, delivery!.lockedUntil]).toEqual(['DELIVERED', 1, null]);
  expect(rx.hitsFor('/many').length - hitsBefore).toBe(1);
});

it('a claim whose lease ran out is taken over; the first holder’s late outcome is not logged twice (compare-and-set)', async () => {
  const hitsBefore = rx.hitsFor('/many').length;
  const id = await t.db.db.transaction((tx) =>
    enqueueCallback(tx, { businessId: t.business.businessId, kind: 'WITHDRAWAL', subjectId: randomUUID(), url: rx.url('/many'), body: { lease: true } }, new Date(Date.now() + 3_600_000)),
  );
  const [first] = await claimDue(t.deps, 1, id);
  expect(first?.id).toBe(id);
  // Held: no one else takes it.
  expect(await claimDue(t.deps, 1, id)).toEqual([]);
  // Its holder stalls past the lease (a dead or frozen worker): another takes it over and delivers.
  await t.db.db.update(callbackDeliveries).set({ lockedUntil: new Date(Date.now() - 1) }).where(eq(callbackDeliveries.id, id));
  const [second] = await claimDue(t.deps, 1, id);
  expect(second?.id).toBe(id);
  expect(await attemptClaimed(t.deps, second!)).toBe('DELIVERED');
  // The first holder wakes up and sends too (the receiver dedupes by webhook-id); its outcome is not logged.
  expect(await attemptClaimed(t.deps, first!)).toBe('SKIPPED');
  const attempts = await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, id));
  expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
  const hits = rx.hitsFor('/many').slice(hitsBefore);
  expect(hits.map((h) => h.headers['webhook-id'])).toEqual([first!.webhookId, first!.webhookId]);
});

it('outcomes written together (one statement for those of the same moment) stay compare-and-set per delivery: two holders of one delivery log one attempt', async () => {
  const hitsBefore = rx.hitsFor('/many').length;
  const ids = await t.db.db.transaction((tx) =>
    Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        enqueueCallback(tx, { businessId: t.business.businessId, kind: 'WITHDRAWAL', subjectId: randomUUID(), url: rx.url('/many'), body: { batch: i } }, new Date(Date.now() + 3_600_000)),
      ),
    ),
  );
  const claimed = await Promise.all(ids.map(async (id) => (await claimDue(t.deps, 1, id))[0]!));
  // The same claim attempted twice at once (a holder that stalled and one that took over, in one
  // process), with two other deliveries. A sender that holds every answer until all four POSTs are
  // answered makes the four outcomes arrive in the same turn of the event loop: one batch.
  let answered = 0;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const sender = t.deps.callbacks;
  const gated = {
    post: async (...args: Parameters<CallbackSender['post']>) => {
      const result = await sender.post(...args);
      if (++answered === 4) openGate();
      await gate;
      return result;
    },
    close: () => Promise.resolve(),
  } as unknown as CallbackSender;
  const deps = { ...t.deps, callbacks: gated };
  const outcomes = await Promise.all([attemptClaimed(deps, claimed[0]!), attemptClaimed(deps, claimed[0]!), attemptClaimed(deps, claimed[1]!), attemptClaimed(deps, claimed[2]!)]);
  expect(outcomes.slice(0, 2).sort()).toEqual(['DELIVERED', 'SKIPPED']);
  expect(outcomes.slice(2)).toEqual(['DELIVERED', 'DELIVERED']);
  const attempts = await t.db.db.select().from(callbackAttempts).where(inArray(callbackAttempts.deliveryId, ids));
  expect(attempts.map((a) => [ids.indexOf(a.deliveryId), a.attempt, a.statusCode]).sort()).toEqual([[0, 1, 200], [1, 1, 200], [2, 1, 200]]);
  const rows = await t.db.db.select().from(callbackDeliveries).where(inArray(callbackDeliveries.id, ids));
  expect(rows.map((d) => [d.status, d.attempts, d.lockedUntil])).toEqual([['DELIVERED', 1, null], ['DELIVERED', 1, null], ['DELIVERED', 1, null]]);
  expect(rx.hitsFor('/many').length - hitsBefore).toBe(4);
});
