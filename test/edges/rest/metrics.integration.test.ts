/**
 * GET /metrics (CONTRACT §4, §9): a bearer token when KASSA_METRICS_TOKEN is
 * set (401 without it), loopback only when it is not (403 from elsewhere),
 * and the installation's numbers read from PostgreSQL at scrape time, the
 * same through any web process.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../../server/edges/app.js';
import { postEntries } from '../../../server/modules/ledger/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The value of one sample line, or null when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',').filter(Boolean);
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(m[3]);
  }
  return null;
}

describe('with KASSA_METRICS_TOKEN set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { KASSA_METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => t.close());

  const scrape = (authorization?: string, remoteAddress = '127.0.0.1') =>
    t.app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: authorization ? { authorization } : {} });

  it('refuses without the token, even from loopback: 401 problem with WWW-Authenticate', async () => {
    const res = await scrape();
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(res.body).not.toContain('kassa_');
  });

  it.each([`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`])('refuses %j with 401', async (authorization) => {
    expect((await scrape(authorization)).statusCode).toBe(401);
  });

  it('answers the right token from any address', async () => {
    const res = await scrape(`Bearer ${TOKEN}`, '203.0.113.9');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('# HELP kassa_payments_created ');
    // This process's log lines dropped while stdout was not read (platform/logger.ts): none here.
    expect(res.body).toMatch(/^kassa_log_lines_dropped_total 0$/m);
  });
});

describe('without a token: loopback only', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const scrape = (remoteAddress: string, app = t.app) => app.inject({ method: 'GET', url: '/metrics', remoteAddress });

  it.each(['203.0.113.9', '10.0.0.5', '::ffff:192.168.1.4', '2001:db8::1'])('refuses %s with 403 METRICS_LOOPBACK_ONLY', async (ip) => {
    const res = await scrape(ip);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'METRICS_LOOPBACK_ONLY' });
  });

  it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1'])('answers %s', async (ip) => {
    expect((await scrape(ip)).statusCode).toBe(200);
  });

  it.each([{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }])(
    'refuses a loopback request forwarded by a proxy no one named (%o): its client is unknown',
    async (headers) => {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'METRICS_LOOPBACK_ONLY' });
      expect(res.json().detail).toContain('KASSA_TRUST_PROXY');
    },
  );

  it('payments, deposits, callbacks and jobs come from the database, the same through a second web process', async () => {
    const pay = (body: Record<string, string>) =>
      t.signed('POST', '/v1/payments', { clientPaymentId: `m-${randomUUID()}`, businessId: t.business.businessId, locale: 'en', ...body });
    expect((await pay({ displayCurrency: 'EUR', displayAmount: '10.00' })).statusCode).toBe(200);
    expect((await pay({ depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' })).statusCode).toBe(200);
    expect((await pay({ depositCurrency: 'BTC', depositAmount: '0.02', network: 'BTC' })).statusCode).toBe(200);
    await t.db.sql`update payments set status = 'EXPIRED' where business_id = ${t.business.businessId} and display_currency = 'EUR' and deposit_currency is null`;
    await t.db.sql`
      insert into callback_deliveries (business_id, kind, subject_id, webhook_id, url, body, status, first_attempt_at)
      values (${t.business.businessId}, 'payment', ${randomUUID()}, ${`msg_${randomUUID()}`}, 'https://shop.example/cb', '{}', 'EXPIRED', now()),
             (${t.business.businessId}, 'payment', ${randomUUID()}, ${`msg_${randomUUID()}`}, 'https://shop.example/cb', '{}', 'DELIVERED', now())`;
    // Due for a minute and not being attempted (no worker runs here); one held by a dispatcher's lease does not count.
    await t.db.sql`
      insert into callback_deliveries (business_id, kind, subject_id, webhook_id, url, body, status, first_attempt_at, next_attempt_at, locked_until)
      values (${t.business.businessId}, 'withdrawal', ${randomUUID()}, ${`msg_${randomUUID()}`}, 'https://shop.example/cb', '{}', 'PENDING', now(), now() - interval '60 seconds', null),
             (${t.business.businessId}, 'withdrawal', ${randomUUID()}, ${`msg_${randomUUID()}`}, 'https://shop.example/cb', '{}', 'PENDING', now(), now() - interval '600 seconds', now() + interval '1 minute')`;
    await t.db.sql`select graphile_worker.add_job('metrics_probe', '{}'::json, run_at => now() - interval '90 seconds')`;
    // A job that failed once and waits for its retry (a held payout), and one locked by a worker for two minutes.
    await t.db.sql`select graphile_worker.add_job('metrics_held', '{}'::json, run_at => now() + interval '5 minutes')`;
    await t.db.sql`select graphile_worker.add_job('metrics_running', '{}'::json)`;
    // A retry already due counts as waiting, not as retrying: the two gauges never count a job twice.
    await t.db.sql`select graphile_worker.add_job('metrics_due_retry', '{}'::json, run_at => now() - interval '1 second')`;
    await t.db.sql`update graphile_worker._private_jobs set attempts = 1
                   where task_id = (select id from graphile_worker._private_tasks where identifier = 'metrics_due_retry')`;
    await t.db.sql`update graphile_worker._private_jobs set attempts = 1, last_error = 'treasury short'
                   where task_id = (select id from graphile_worker._private_tasks where identifier = 'metrics_held')`;
    await t.db.sql`update graphile_worker._private_jobs set attempts = 1, locked_by = 'worker-x', locked_at = now() - interval '120 seconds'
                   where task_id = (select id from graphile_worker._private_tasks where identifier = 'metrics_running')`;

    // A live withdrawal sent five minutes ago and not final yet (PROCESSING with its hash, the event saying so);
    // another PROCESSING one not sent yet does not count.
    const withdraw = async (clientWithdrawalId: string) => {
      await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '100', kind: 'TEST' }], t.clock.now());
      const created = await t.signed('POST', '/v1/withdrawals', {
        clientWithdrawalId, businessId: t.business.businessId, withdrawCurrency: 'ETH', network: 'ETH', address: '0x00000000000000000000000000000000000a11ce', amount: '0.001',
      });
      expect(created.statusCode, created.body).toBe(200);
      return created.json().withdrawalId as string;
    };
    const sentId = await withdraw('metrics-sent');
    await withdraw('metrics-not-sent');
    await t.db.sql`update withdrawals set transaction_id = '0xabc' where id = ${sentId}`;
    await t.db.sql`insert into events (entity_type, entity_id, from_status, to_status, reason, data, at)
                   values ('withdrawal', ${sentId}, 'PROCESSING', 'PROCESSING', 'broadcast', '{"transactionId":"0xabc"}', now() - interval '300 seconds')`;

    const text = (await scrape('127.0.0.1')).body;
    expect(sample(text, 'kassa_payouts_unconfirmed', { kind: 'withdrawal', network: 'ETH' })).toBe(1);
    const waited = sample(text, 'kassa_payouts_oldest_unconfirmed_seconds', { kind: 'withdrawal', network: 'ETH' });
    expect(waited).toBeGreaterThanOrEqual(299);
    expect(waited).toBeLessThan(900);
    expect(sample(text, 'kassa_payouts_unconfirmed', { kind: 'refund', network: 'ETH' })).toBeNull();
    expect(sample(text, 'kassa_payments_created', { currency: 'BTC' })).toBe(2);
    expect(sample(text, 'kassa_payments_created', { currency: 'EUR' })).toBe(1);
    expect(sample(text, 'kassa_payments_finished', { status: 'EXPIRED', currency: 'EUR' })).toBe(1);
    expect(sample(text, 'kassa_payments_finished', { status: 'PENDING', currency: 'BTC' })).toBeNull();
    expect(sample(text, 'kassa_callbacks', { kind: 'payment', outcome: 'failed' })).toBe(1);
    expect(sample(text, 'kassa_callbacks', { kind: 'payment', outcome: 'delivered' })).toBe(1);
    const late = sample(text, 'kassa_callbacks_oldest_due_seconds', { kind: 'withdrawal' });
    expect(late).toBeGreaterThanOrEqual(59);
    expect(late).toBeLessThan(300);
    expect(sample(text, 'kassa_callbacks_oldest_due_seconds', { kind: 'payment' })).toBeNull();
    expect(sample(text, 'kassa_jobs_waiting', { task: 'metrics_probe' })).toBe(1);
    expect(sample(text, 'kassa_jobs_oldest_waiting_seconds', { task: 'metrics_probe' })).toBeGreaterThanOrEqual(89);
    expect(sample(text, 'kassa_jobs_waiting', { task: 'metrics_held' })).toBeNull();
    expect(sample(text, 'kassa_jobs_retrying', { task: 'metrics_held' })).toBe(1);
    expect(sample(text, 'kassa_jobs_retrying', { task: 'metrics_running' })).toBeNull();
    expect(sample(text, 'kassa_jobs_retrying', { task: 'metrics_probe' })).toBeNull();
    expect(sample(text, 'kassa_jobs_retrying', { task: 'metrics_due_retry' })).toBeNull();
    expect(sample(text, 'kassa_jobs_waiting', { task: 'metrics_due_retry' })).toBe(1);
    const locked = sample(text, 'kassa_jobs_oldest_locked_seconds', { task: 'metrics_running' });
    expect(locked).toBeGreaterThanOrEqual(119);
    expect(locked).toBeLessThan(600);
    expect(sample(text, 'kassa_jobs_oldest_locked_seconds', { task: 'metrics_probe' })).toBeNull();
    expect(text).toMatch(/^kassa_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/payments"[^}]*\} [1-9]/m);

    // Another web process over the same database shows the same installation numbers.
    const other = await createServer({ deps: t.deps, logger: false });
    try {
      await other.app.ready();
      const second = (await scrape('127.0.0.1', other.app)).body;
      for (const [name, labels] of [
        ['kassa_payments_created', { currency: 'BTC' }],
        ['kassa_payments_finished', { status: 'EXPIRED', currency: 'EUR' }],
        ['kassa_jobs_waiting', { task: 'metrics_probe' }],
      ] as const) {
        expect(sample(second, name, labels), name).toBe(sample(text, name, labels));
      }
      // Its own HTTP histogram has not seen the payments requests.
      expect(second).not.toMatch(/route="\/v1\/payments"/);
      // The registry is handed out, for gauges the composition root adds (e.g. per network).
      expect((await other.metrics.getSingleMetric('kassa_jobs_waiting')?.get())?.values.length).toBeGreaterThan(0);
    } finally {
      await other.stop();
    }
  });

  it("shows this process's batched statements: items per statement, round trip and time held, by batcher", async () => {
    const series = (text: string, name: string, batch: string) => sample(text, name, { batch }) ?? 0;
    const before = (await scrape('127.0.0.1')).body;
    // Five creates sent in one turn of the event loop go out in at most two statements while the first is at the database.
    const creates = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        t.signed('POST', '/v1/payments', { clientPaymentId: `b-${randomUUID()}`, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '3.00' }),
      ),
    );
    expect(creates.map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const id = creates[0]!.json().paymentInfo.paymentId as string;
    expect((await t.signed('GET', `/v1/payments/${id}`)).statusCode).toBe(200);
    const after = (await scrape('127.0.0.1')).body;
    const delta = (name: string, batch: string) => series(after, name, batch) - series(before, name, batch);

    expect(delta('kassa_db_batch_items_sum', 'payment_create')).toBe(5);
    const statements = delta('kassa_db_batch_items_count', 'payment_create');
    expect(statements).toBeGreaterThanOrEqual(1);
    expect(statements).toBeLessThanOrEqual(5);
    expect(delta('kassa_db_batch_seconds_count', 'payment_create')).toBe(statements);
    expect(delta('kassa_db_batch_seconds_sum', 'payment_create')).toBeGreaterThan(0);
    expect(delta('kassa_db_batch_held_seconds_count', 'payment_create')).toBe(statements);
    expect(delta('kassa_db_batch_items_sum', 'payment_read_stamp')).toBe(1);
    expect(delta('kassa_db_batch_seconds_count', 'payment_read_stamp')).toBe(1);
    expect(after).toContain('# HELP kassa_db_batch_seconds ');
  });
});
