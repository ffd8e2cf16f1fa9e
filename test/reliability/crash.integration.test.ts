/**
 * Crash safety (issue 7.3), with real processes killed by SIGKILL: Kassa as
 * `npm start` runs it (`node dist/server/main.js`), killed with its whole
 * process group.
 *
 * 1. Callbacks: ≈200 withdrawal outcomes (1,000 under `npm run soak`) are
 *    broadcast and called back by a worker child; the receiver answers slowly,
 *    so many attempts are in flight when the worker is killed. After a restart
 *    — with time advanced the way test/modules/callbacks/crash-safety does it (the
 *    dead worker's callback leases and job locks aged in SQL) — every callback is
 *    delivered, a duplicate only ever under the same webhook-id and body.
 * 2. Payment creation: a burst of signed POST /v1/payments against a web
 *    child (`--role=web`) that is killed mid-burst. Every 200 answered before
 *    the kill is in the database, every payment has its creation event and
 *    its expiry time (what the expiry sweep schedules from), and clients retrying after a restart
 *    get exactly one payment per clientPaymentId.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../db/embedded.js';
import { verifyCallback } from '../../server/modules/callbacks/signing.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { postEntries } from '../../server/modules/ledger/ledger.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Receiver, type Hit } from '../modules/callbacks/receiver.js';
import { groupPids, KASSA_BUNDLE, kassaEnv, scale, SOAK, spawnKid, startKassaChild, waitFor, type Kid } from './support.js';

const CALLBACKS = scale('KASSA_CRASH_CALLBACKS', 200, 1000);
/** 200 answers before the web process is killed. */
const ANSWERED_BEFORE_KILL = scale('KASSA_CRASH_PAYMENTS', 100, 1000);
const TIMEOUT = SOAK ? 900_000 : 120_000;

const ENV = { KASSA_CALLBACK_RETRY_INTERVAL_S: '1', KASSA_SANDBOX_BROADCAST_DELAY_S: '0', KASSA_CALLBACK_TIMEOUT_MS: '10000' };
const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

let t: TestApp;
const rx = new Receiver();
const kids: Kid[] = [];
const held: ServerResponse[] = [];
/** Answer given per webhook-id, in order. */
const answers = new Map<string, number[]>();
let answerDelayMs = 40;

function killAll(): void {
  for (const kid of kids) kid.kill();
}

async function killAndWait(kid: Kid, what: string): Promise<void> {
  const pgid = kid.proc.pid!;
  expect(groupPids(pgid).length, `${what} has processes before the kill`).toBeGreaterThan(0);
  kid.kill();
  await kid.exited;
  await waitFor(() => groupPids(pgid).length === 0, 10_000, `every process of ${what} to die`);
}

/**
 * The production worker: `node dist/server/main.js --role=worker` (its default
 * concurrency for jobs and callbacks alike, the cron sweeps). It prints nothing when ready;
 * the caller waits for the work it does.
 */
function startWorkerChild(): Kid {
  // Warnings kept: a failure below prints the worker's last output.
  const kid = spawnKid(process.execPath, [resolve(KASSA_BUNDLE), '--role=worker'], { ...kassaEnv(t.db.url, { PUBLIC_URL: 'http://kassa.test', LOG_LEVEL: 'warn' }), ...ENV });
  kids.push(kid);
  return kid;
}

beforeAll(async () => {
  await rx.start();
  rx.on('/cb', (_n, req, res) => {
    const id = String(req.headers['webhook-id']);
    // slow enough that a few attempts are always in flight; every 25th first attempt fails once (a retry in the mix)
    const seen = answers.get(id) ?? [];
    const status = seen.length === 0 && createHash('sha256').update(id).digest()[0]! % 25 === 0 ? 503 : 200;
    held.push(res);
    setTimeout(() => {
      if (res.destroyed) return;
      answers.set(id, [...(answers.get(id) ?? []), status]);
      res.writeHead(status).end();
    }, answerDelayMs);
  });
  t = await startTestApp({ env: ENV, business: { withdrawalCallbackUrl: rx.url('/cb') } });
  // Real time on the server side too (the children use the real clock).
  Object.defineProperty(t.clock, 'current', { get: () => new Date(), set: () => {}, configurable: true });
}, 60_000);

afterAll(async () => {
  killAll();
  await Promise.all(kids.map((k) => k.exited));
  await rx.stop();
  await t?.close();
});

/** Withdrawals not completed, deliveries not delivered and the jobs left: what a timeout reports. */
async function leftOver(): Promise<unknown> {
  const [state] = (await t.db.db.execute(sql`
    select
      (select json_agg(json_build_object('id', id, 'status', status)) from withdrawals where status <> 'COMPLETED') as withdrawals,
      (select json_agg(json_build_object('id', id, 'status', status, 'attempts', attempts, 'next', next_attempt_at, 'lockedUntil', locked_until, 'now', now()))
         from callback_deliveries where status <> 'DELIVERED') as deliveries,
      (select json_agg(json_build_object('task', k.identifier, 'runAt', j.run_at, 'lockedAt', j.locked_at, 'attempts', j.attempts, 'lastError', j.last_error))
         from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id) as jobs`)) as unknown as [unknown];
  return state;
}

type DeliveryRow = { id: string; webhook_id: string; status: string; subject_id: string; body: string };

describe('a worker SIGKILLed with callbacks in flight', () => {
  it(`delivers all ${CALLBACKS} callbacks after a restart; duplicates only under the same webhook-id and body`, { timeout: TIMEOUT }, async () => {
    await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '100000000.00', kind: 'TEST' }], new Date());
    // The outcomes are recorded by the worker: create the withdrawals first (their broadcast jobs are due at once).
    const ids: string[] = [];
    for (let i = 0; i < CALLBACKS; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, CALLBACKS - i) }, (_, j) =>
          t.signed('POST', '/v1/withdrawals', {
            clientWithdrawalId: `crash-${i + j}`, businessId: t.business.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.001',
          }),
        ),
      );
      for (const res of batch) {
        expect(res.statusCode, res.body).toBe(200);
        ids.push(res.json().withdrawalId);
      }
    }

    const first = startWorkerChild();
    // Kill once a good part of the callbacks has arrived, while others are being broadcast or sent.
    await waitFor(
      () => {
        if (first.proc.exitCode !== null) throw new Error(`the worker exited: ${first.output()}`);
        return rx.hitsFor('/cb').length >= CALLBACKS * 0.3;
      },
      TIMEOUT / 2,
      `a third of the callbacks to arrive (worker output: ${first.output()})`,
    );
    const inFlight = held.filter((r) => !r.writableEnded).length;
    await killAndWait(first, 'the worker child');

    const [progress] = (await t.db.db.execute(sql`
      select count(*) filter (where status = 'DELIVERED')::int as delivered, count(*)::int as deliveries,
             (select count(*)::int from withdrawals where status = 'PROCESSING') as processing
      from callback_deliveries`)) as unknown as [{ delivered: number; deliveries: number; processing: number }];
    // The kill really happened mid-way: not everything was delivered (or even broadcast) yet.
    expect(progress.delivered).toBeLessThan(CALLBACKS);
    process.stderr.write(
      `[crash] killed the worker with ${inFlight} requests open at the receiver, ${progress.delivered}/${progress.deliveries} deliveries done, ${progress.processing} withdrawals not yet broadcast\n`,
    );

    // Time passes (simulated, as in test/modules/callbacks/crash-safety): the dead worker's callback leases
    // run out (timeout + 60 s), and its jobs' locks are released the way graphile-worker's stale-lock reset
    // releases them once they are four hours old. Aging the locks alone is not enough: that reset runs at a
    // random moment in a worker's first minute (then every 8–10 minutes), and its jobs wait for it.
    const [leases] = (await t.db.db.execute(sql`
      with expired as (update callback_deliveries set locked_until = now() - interval '1 second' where locked_until > now() returning 1)
      select count(*)::int as n from expired`)) as unknown as [{ n: number }];
    const [jobs] = (await t.db.db.execute(sql`
      with reset as (update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = greatest(run_at, now()) where locked_at is not null returning 1)
      select count(*)::int as n from reset`)) as unknown as [{ n: number }];
    process.stderr.write(`[crash] the dead worker held ${leases.n} callback leases and ${jobs.n} jobs\n`);

    answerDelayMs = 5;
    const second = startWorkerChild();
    await waitFor(
      async () => {
        const [row] = (await t.db.db.execute(sql`
          select (select count(*)::int from withdrawals where status = 'COMPLETED') as completed,
                 (select count(*)::int from callback_deliveries where status = 'DELIVERED') as delivered`)) as unknown as [{ completed: number; delivered: number }];
        if (row.completed === CALLBACKS && row.delivered === CALLBACKS) return true;
        // Not done: what is left, for the timeout's message.
        throw new Error(`${JSON.stringify(await leftOver())}; worker output: ${second.output().slice(-3000)}`);
      },
      TIMEOUT / 2,
      'every withdrawal completed and every callback delivered after the restart',
      200,
    );

    const deliveries = (await t.db.db.execute(sql`select id, webhook_id, status, subject_id, body from callback_deliveries`)) as unknown as DeliveryRow[];
    // exactly one delivery per withdrawal: a broadcast re-run after the crash did not record a second outcome
    expect(deliveries).toHaveLength(CALLBACKS);
    expect(new Set(deliveries.map((d) => d.subject_id))).toEqual(new Set(ids));
    const byWebhookId = new Map(deliveries.map((d) => [d.webhook_id, d]));

    const hits = rx.hitsFor('/cb');
    const hitsById = new Map<string, Hit[]>();
    for (const hit of hits) {
      const id = String(hit.headers['webhook-id']);
      hitsById.set(id, [...(hitsById.get(id) ?? []), hit]);
    }
    // every request the receiver saw belongs to a delivery, carries its exact body and a valid signature
    for (const [id, list] of hitsById) {
      const delivery = byWebhookId.get(id);
      expect(delivery, `unknown webhook-id ${id}`).toBeDefined();
      for (const hit of list) {
        expect(hit.body).toBe(delivery!.body);
        expect(() => verifyCallback(t.business.callbackSecret, hit.headers as Record<string, string>, hit.body)).not.toThrow();
      }
    }
    // every delivery was answered 2xx at least once
    const undelivered = deliveries.filter((d) => !(answers.get(d.webhook_id) ?? []).some((s) => s < 300));
    expect(undelivered.map((d) => d.id)).toEqual([]);
    const duplicates = [...hitsById.values()].filter((l) => l.length > 1).length;
    process.stderr.write(`[crash] ${hits.length} requests for ${deliveries.length} callbacks; ${duplicates} webhook-ids were sent more than once\n`);
  });
});

describe('a web process SIGKILLed during a burst of payment creations', () => {
  it(`keeps every payment answered 200 (${ANSWERED_BEFORE_KILL} before the kill), each with its creation event; retries create no duplicates`, { timeout: TIMEOUT }, async () => {
    const port = await freePort();
    let web = await startKassaChild(t.db.url, port, { role: 'web' });
    kids.push(web);

    const bodies = new Map<string, string>();
    const answered = new Map<string, string>(); // clientPaymentId → paymentId
    let seq = 0;
    let stop = false;
    const bodyFor = (clientPaymentId: string, n: number) =>
      JSON.stringify(
        n % 3 === 0
          ? { clientPaymentId, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.001', network: 'BTC' }
          : { clientPaymentId, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: `${(n % 90) + 10}.00` },
      );
    const post = async (url: string, clientPaymentId: string) => {
      const body = bodies.get(clientPaymentId)!;
      const res = await fetch(`${url}/v1/payments`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', authorization: authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'POST', path: '/v1/payments', body }) },
      });
      const text = await res.text();
      return { status: res.status, text };
    };
    const client = async (url: string) => {
      while (!stop) {
        const clientPaymentId = `burst-${++seq}-${randomUUID().slice(0, 8)}`;
        bodies.set(clientPaymentId, bodyFor(clientPaymentId, seq));
        try {
          const res = await post(url, clientPaymentId);
          if (res.status === 200) answered.set(clientPaymentId, JSON.parse(res.text).paymentInfo.paymentId);
          else throw new Error(`unexpected ${res.status} before the kill: ${res.text}`);
        } catch (error) {
          if (!stop) throw error;
        }
      }
    };
    const clients = Array.from({ length: 8 }, () => client(web.url));
    await waitFor(() => answered.size >= ANSWERED_BEFORE_KILL, TIMEOUT / 2, `${ANSWERED_BEFORE_KILL} payments to be answered`);
    const answeredBeforeKill = new Map(answered);
    // kill first, then tell the clients: requests are in flight at the moment of the kill
    const killed = killAndWait(web, 'the web child');
    stop = true;
    await killed;
    await Promise.allSettled(clients);
    const attempted = [...bodies.keys()];
    process.stderr.write(`[crash] web child killed after ${answeredBeforeKill.size} answers; ${attempted.length - answered.size} requests got no answer\n`);

    // every 200 is in the database, with the id that was answered
    const rows = (await t.db.db.execute(sql`select id, client_payment_id from payments where client_payment_id like 'burst-%'`)) as unknown as { id: string; client_payment_id: string }[];
    const stored = new Map(rows.map((r) => [r.client_payment_id, r.id]));
    const lost = [...answered].filter(([cid, pid]) => stored.get(cid) !== pid);
    expect(lost).toEqual([]);
    // no payment without its creation event, nor a one-time payment without its expiry time (the sweep's input)
    const orphans = (await t.db.db.execute(sql`
      select p.id from payments p
      where not exists (select 1 from events e where e.entity_type = 'payment' and e.entity_id = p.id and e.from_status is null and e.reason = 'created')
         or (p.type = 'ONE_TIME' and p.expires_at is distinct from p.initiated_at + make_interval(mins => p.expiration_minutes))`)) as unknown as { id: string }[];
    expect(orphans).toEqual([]);

    // A restarted web process; clients retry whatever got no answer: one payment per clientPaymentId.
    web = await startKassaChild(t.db.url, port, { role: 'web' });
    kids.push(web);
    const unanswered = attempted.filter((cid) => !answered.has(cid));
    for (const cid of unanswered) {
      const res = await post(web.url, cid);
      expect(res.status, res.text).toBe(200);
      const pid = JSON.parse(res.text).paymentInfo.paymentId as string;
      if (stored.has(cid)) expect(pid).toBe(stored.get(cid)); // committed before the kill, answer lost: the same payment
    }
    const [count] = (await t.db.db.execute(sql`select count(*)::int as n, count(distinct client_payment_id)::int as d from payments where client_payment_id like 'burst-%'`)) as unknown as [{ n: number; d: number }];
    expect(count).toEqual({ n: attempted.length, d: attempted.length });
    web.kill();
    await web.exited;
  });
});
