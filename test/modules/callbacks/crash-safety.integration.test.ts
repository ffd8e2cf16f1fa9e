/**
 * A crash can delay a callback but never lose it (CONTRACT §6). A worker
 * runs as a child process; its callback attempt is held open by the
 * receiver; the child is SIGKILLed mid-attempt. The delivery stays claimed
 * by the dead worker's lease; once the lease runs out a fresh worker's
 * dispatcher claims it and delivers it under the same webhook-id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import type { Runner } from 'graphile-worker';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callbackAttempts, callbackDeliveries } from '../../../db/schema.js';
import { claimDue, enqueueCallback } from '../../../server/modules/callbacks/delivery.service.js';
import { verifyCallback } from '../../../server/modules/callbacks/signing.js';
import { postEntries } from '../../../server/modules/ledger/ledger.service.js';
import { startTestApp, TEST_MASTER_KEY, type TestApp } from '../../helpers/app.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';
import { headersOf, Receiver } from './receiver.js';

const ENV = { KASSA_CALLBACK_RETRY_INTERVAL_S: '1', KASSA_SANDBOX_BROADCAST_DELAY_S: '0', KASSA_CALLBACK_TIMEOUT_MS: '10000' };

let t: TestApp;
let child: ChildProcess | null = null;
/** The pid of the node process that actually runs the worker (tsx's own child). */
let workerPid = 0;
let worker: Runner | null = null;
const rx = new Receiver();
const held: ServerResponse[] = [];

/** Alive and not a zombie (a reparented zombie may never be reaped in a container). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * SIGKILL the whole process group of the child: `tsx` runs the script in a
 * node process of its own, which would survive (orphaned) if only the tsx
 * process were killed.
 */
function killChild(): void {
  if (!child?.pid || !(alive(child.pid) || alive(workerPid))) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function startChild(): Promise<ChildProcess> {
  const proc = spawn(resolve('node_modules/.bin/tsx'), [resolve('test/modules/callbacks/worker-child.ts')], {
    cwd: resolve('.'),
    detached: true, // its own process group, so that the kill reaches tsx's node child too
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: t.db.url,
      KASSA_MASTER_KEY: TEST_MASTER_KEY,
      PUBLIC_URL: 'http://kassa.test',
      LOG_LEVEL: 'silent',
      ...ENV,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  return new Promise((res, rej) => {
    proc.stdout!.on('data', (c: Buffer) => {
      const ready = /ready (\d+)/.exec(c.toString());
      if (ready) {
        workerPid = Number(ready[1]);
        res(proc);
      }
    });
    proc.once('exit', (code) => rej(new Error(`worker child exited with ${code}: ${stderr}`)));
  });
}

beforeAll(async () => {
  await rx.start();
  // The first request is held open (the attempt is in flight when the worker dies); later ones succeed.
  rx.on('/hold', (n, _req, res) => {
    if (n === 1) held.push(res);
    else res.writeHead(200).end();
  });
  t = await startTestApp({ env: ENV, business: { withdrawalCallbackUrl: rx.url('/hold') } });
  // Real time for the server side too, so run_at and next_attempt_at are real.
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
});
afterAll(async () => {
  killChild();
  await worker?.stop();
  await t?.close();
  await rx.stop();
});

/** Funds the business, then requests a 0.01 BTC withdrawal; its id. */
async function fundedWithdrawal(clientWithdrawalId: string): Promise<string> {
  await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000.00', kind: 'TEST' }], new Date());
  const res = await t.signed('POST', '/v1/withdrawals', {
    clientWithdrawalId, businessId: t.business.businessId, withdrawCurrency: 'BTC', network: 'BTC',
    address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: '0.01',
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().withdrawalId as string;
}

it('a worker killed during an attempt: its lease holds the delivery, then a fresh worker delivers it with the same webhook-id', async () => {
  child = await startChild();
  const withdrawalId = await fundedWithdrawal('crash-1');

  // the child broadcast the withdrawal and is now waiting on the held callback
  await eventually(async () => rx.hitsFor('/hold').length === 1, 20_000, 'the first attempt to arrive');
  const [delivery] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, withdrawalId));
  expect(delivery!.status).toBe('PENDING');

  const heldClosed = new Promise((r) => held[0]!.once('close', r));
  expect(alive(workerPid)).toBe(true);
  killChild();
  await eventually(async () => !alive(workerPid) && !alive(child!.pid!), 5_000, 'the worker process to die');
  // the in-flight request died with it
  await heldClosed;

  // the attempt was in flight: nothing was logged, the delivery is still PENDING, claimed by the
  // dead worker for the callback timeout (10 s) and a minute
  expect(await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, delivery!.id))).toHaveLength(0);
  const [stillPending] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, delivery!.id));
  expect(stillPending!.status).toBe('PENDING');
  expect(stillPending!.attempts).toBe(0);
  const leaseLeft = stillPending!.lockedUntil!.getTime() - Date.now();
  expect(leaseLeft).toBeGreaterThan(60_000);
  expect(leaseLeft).toBeLessThanOrEqual(70_000);

  // A fresh worker leaves it alone while the lease holds...
  worker = await startTestWorker(t.deps);
  await new Promise((r) => setTimeout(r, 1_500));
  expect(rx.hitsFor('/hold')).toHaveLength(1);
  // ...and takes it once the lease has run out (moved into the past here, instead of waiting 70 s).
  await t.db.db.update(callbackDeliveries).set({ lockedUntil: new Date(Date.now() - 1_000) }).where(eq(callbackDeliveries.id, delivery!.id));
  await eventually(async () => {
    const [d] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, delivery!.id));
    return d!.status === 'DELIVERED' ? d : null;
  }, 15_000, 'the callback to be delivered after the crash');

  const hits = rx.hitsFor('/hold');
  expect(hits).toHaveLength(2);
  expect(hits[1]!.headers['webhook-id']).toBe(hits[0]!.headers['webhook-id']);
  expect(hits[1]!.headers['webhook-id']).toBe(delivery!.webhookId);
  expect(hits[1]!.body).toBe(hits[0]!.body);
  const body = verifyCallback(t.business.callbackSecret, headersOf(hits[1]!), hits[1]!.body);
  expect(body).toMatchObject({ status: 'COMPLETED', withdrawalId, clientWithdrawalId: 'crash-1' });
  const attempts = await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, delivery!.id));
  expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
});

it('a payment’s later callback waits while a dead worker holds its earlier one, then both are delivered in order', async () => {
  const paymentId = randomUUID();
  const enqueue = (status: string) =>
    t.db.db.transaction((tx) =>
      enqueueCallback(tx, { businessId: t.business.businessId, kind: 'PAYMENT', subjectId: paymentId, url: rx.url('/ordered'), body: { status } }, new Date()),
    );
  // No live worker while the first is claimed by one that then dies before attempting it: the lease stays.
  await worker?.stop();
  worker = null;
  const first = await enqueue('PENDING');
  const [claimed] = await claimDue(t.deps, 10, first);
  expect(claimed?.id).toBe(first);
  const second = await enqueue('COMPLETED');
  // A live worker finds the second due, but behind the held one.
  worker = await startTestWorker(t.deps);
  await new Promise((r) => setTimeout(r, 1_500));
  expect(rx.hitsFor('/ordered')).toHaveLength(0);
  await t.db.db.update(callbackDeliveries).set({ lockedUntil: new Date(Date.now() - 1_000) }).where(eq(callbackDeliveries.id, first));
  await eventually(async () => rx.hitsFor('/ordered').length === 2, 15_000, 'both callbacks to be delivered');
  expect(rx.hitsFor('/ordered').map((h) => JSON.parse(h.body).status)).toEqual(['PENDING', 'COMPLETED']);
  // The outcome is written after the receiver answered: wait for the second one's too.
  const done = await eventually(async () => {
    const rows = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, paymentId));
    return rows.every((d) => d.status !== 'PENDING') ? rows : null;
  }, 10_000, 'both outcomes to be written');
  expect(done.map((d) => [d.id === first ? 'first' : d.id === second ? 'second' : '?', d.status]).sort()).toEqual([['first', 'DELIVERED'], ['second', 'DELIVERED']]);
});
