/**
 * A crash can delay a callback but never lose it (CONTRACT §6). A worker
 * runs as a child process; its callback attempt is held open by the
 * receiver; the child is SIGKILLed mid-attempt. The job stays locked by the
 * dead worker, the sweep re-adds it once the lock is old enough, and a
 * fresh worker delivers the callback under the same webhook-id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callbackAttempts, callbackDeliveries } from '../../../db/schema.js';
import { sweepCallbacks } from '../../../server/modules/callbacks/delivery.service.js';
import { forceOutcome } from '../../../server/modules/withdrawals/withdrawal-broadcast.job.js';
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

it('a worker killed during an attempt: the sweep re-adds the job and a fresh worker delivers it with the same webhook-id', async () => {
  child = await startChild();
  const withdrawalId = await fundedWithdrawal('crash-1');

  // the child broadcast the withdrawal and is now waiting on the held callback
  await eventually(async () => rx.hitsFor('/hold').length === 1, 20_000, 'the first attempt to arrive');
  const [delivery] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, withdrawalId));
  expect(delivery!.status).toBe('PENDING');
  const key = `deliver_callback:${delivery!.id}:0`; // no attempt logged yet

  const heldClosed = new Promise((r) => held[0]!.once('close', r));
  expect(alive(workerPid)).toBe(true);
  killChild();
  await eventually(async () => !alive(workerPid) && !alive(child!.pid!), 5_000, 'the worker process to die');
  // the in-flight request died with it
  await heldClosed;

  // the attempt was in flight: nothing was logged, the delivery is still PENDING, its job is locked by the dead worker
  expect(await t.db.db.select().from(callbackAttempts).where(eq(callbackAttempts.deliveryId, delivery!.id))).toHaveLength(0);
  const [stillPending] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, delivery!.id));
  expect(stillPending!.status).toBe('PENDING');
  expect(stillPending!.attempts).toBe(0);
  const jobs = (await t.db.db.execute(sql`select locked_at from graphile_worker.jobs where key = ${key}`)) as unknown as { locked_at: Date | null }[];
  expect(jobs).toHaveLength(1);
  expect(jobs[0]!.locked_at).not.toBeNull();

  // Simulated passage of time, in two parts: the sweep runs with a clock two minutes ahead (the
  // delivery is then overdue by more than its 30 s grace), and the dead worker's lock is moved ten
  // minutes into the past in SQL (older than timeout + 60 s), since the sweep judges locks by the
  // database clock. Only with both does it re-add the job; a fresh lock is left alone.
  const later = { ...t.deps, now: () => new Date(Date.now() + 120_000) };
  expect(await sweepCallbacks(later)).toBe(0);
  await t.db.db.execute(sql`update graphile_worker._private_jobs set locked_at = now() - interval '10 minutes' where key = ${key}`);
  expect(await sweepCallbacks(later)).toBe(1);
  // and only once: the re-added job is live
  expect(await sweepCallbacks(later)).toBe(0);

  worker = await startTestWorker(t.deps);
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

it('a job waiting behind a queue its dead worker left locked (payment callbacks run in their subject’s queue) is re-added by the sweep; behind a fresh lock it is left alone', async () => {
  await worker?.stop();
  worker = null;
  const withdrawalId = await fundedWithdrawal('queued-1');
  // The outcome (and so the delivery and its first job, in the subject's queue) without a worker.
  await forceOutcome(t.deps, t.deps.chains, t.business.businessId, withdrawalId, 'COMPLETED');
  const [delivery] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.subjectId, withdrawalId));
  const key = `deliver_callback:${delivery!.id}:0`; // no attempt logged yet
  // As a payment callback's job: in its subject's queue (withdrawal callbacks run outside queues).
  await t.db.db.execute(sql`select graphile_worker.add_job('deliver_callback', ${JSON.stringify({ deliveryId: delivery!.id })}::json,
    queue_name => ${`callbacks:${withdrawalId}`}, job_key => ${key}, max_attempts => 3)`);
  const lockQueue = (age: string) =>
    t.db.db.execute(sql`
      update graphile_worker._private_job_queues set locked_at = now() - ${age}::interval, locked_by = 'a-dead-worker'
      where id = (select job_queue_id from graphile_worker._private_jobs where key = ${key})`);
  const later = { ...t.deps, now: () => new Date(Date.now() + 120_000) };
  await lockQueue('1 second'); // a live worker running another job of the subject
  expect(await sweepCallbacks(later)).toBe(0);
  await lockQueue('10 minutes'); // its worker died hours ago, in graphile-worker's eyes still holding it
  expect(await sweepCallbacks(later)).toBe(1);
  expect(await sweepCallbacks(later)).toBe(0);
  worker = await startTestWorker(t.deps);
  await eventually(async () => {
    const [d] = await t.db.db.select().from(callbackDeliveries).where(eq(callbackDeliveries.id, delivery!.id));
    return d!.status === 'DELIVERED' ? d : null;
  }, 15_000, 'the callback behind the dead queue to be delivered');
});
