/**
 * Prometheus metrics at GET /metrics (CONTRACT §4, §9). Two kinds:
 *
 * - this process's own: HTTP requests and latency by route, Node process metrics,
 *   and its batched statements (platform/batch.ts: items, round trip, time held);
 * - the installation's, read from PostgreSQL at scrape time (gauges with a
 *   `collect` callback): payments created and finished, deposits credited,
 *   callbacks by outcome and the oldest due, the job queue's depth and age. Read from the
 *   database, they are the same whichever web process is scraped, and true
 *   across web and worker processes (a counter in memory would only count
 *   what this process saw).
 *
 * Access: with KASSA_METRICS_TOKEN set, `Authorization: Bearer <token>` is
 * required (401 otherwise); without it only loopback clients are answered
 * (403 otherwise), so an unconfigured server never shows its numbers to the
 * network. `registerMetrics` returns the Registry so that the composition
 * root can add more gauges (e.g. per-network chain heights).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Deps } from '../../deps.js';
import { z } from 'zod';
import { KassaError } from '../../platform/errors.js';
import { safeEqual } from '../../platform/secrets.js';
import { batchMetrics } from '../../platform/batch.js';
import { droppedLogLines } from '../../platform/logger.js';
import { defineRoute, type AnyRoute } from './route.js';

/** Payment statuses after which nothing more is expected (CONTRACT §5). */
const OPEN_PAYMENT_STATUSES = ['NEW', 'PENDING', 'AWAITING'];

/** Delivery status → the outcome label: DELIVERED, PENDING (retrying), EXPIRED (failed: the retry window passed). */
const CALLBACK_OUTCOMES: Record<string, string> = { DELIVERED: 'delivered', PENDING: 'pending', EXPIRED: 'failed' };

export function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip) || /^::ffff:127\./i.test(ip);
}

type Row = Record<string, string | number | null>;

export function registerMetrics(app: FastifyInstance, deps: Deps): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kassa_' });
  // The batchers' own series (platform/batch.ts): they live as long as the process, each server shows them.
  for (const metric of Object.values(batchMetrics)) registry.registerMetric(metric);
  registry.registerMetric(droppedLogLines);
  const requests = new Counter({
    name: 'kassa_http_requests_total',
    help: 'HTTP requests answered by this process, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'kassa_http_request_duration_seconds',
    help: 'HTTP request latency in this process by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL, so ids do not explode the label set.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });

  const sql = deps.database.sql;
  /** A gauge set from one query at scrape time; a failed query leaves it empty rather than failing the scrape. */
  const fromDatabase = <L extends string>(name: string, help: string, labelNames: readonly L[], query: () => Promise<readonly Row[]>) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const row of await query()) {
            const labels = Object.fromEntries(labelNames.map((l) => [l, String(row[l] ?? '')])) as Record<L, string>;
            this.set(labels, Number(row.value));
          }
        } catch (error) {
          app.log.warn({ err: error, metric: name }, 'metric query failed');
        }
      },
    });

  fromDatabase(
    'kassa_payments_created',
    'Payments ever created, by currency (the crypto currency once chosen, else the display currency)',
    ['currency'],
    () => sql`select coalesce(deposit_currency, display_currency) as currency, count(*)::int as value from payments group by 1`,
  );
  fromDatabase(
    'kassa_payments_finished',
    'Payments in a final status (DEPOSITED, OVERPAID, EXPIRED, BLOCKED, UNPROCESSABLE, FAILED), by status and currency',
    ['status', 'currency'],
    () => sql`select status, coalesce(deposit_currency, display_currency) as currency, count(*)::int as value
              from payments where status <> all(${OPEN_PAYMENT_STATUSES}) group by 1, 2`,
  );
  fromDatabase(
    'kassa_deposits_credited',
    'Deposits credited to a merchant balance, by currency and network',
    ['currency', 'network'],
    () => sql`select deposit_currency as currency, network, count(*)::int as value from deposits where credited group by 1, 2`,
  );
  fromDatabase(
    'kassa_callbacks',
    'Callback deliveries by kind and outcome: delivered, pending (still retrying) or failed (retry window passed)',
    ['kind', 'outcome'],
    async () =>
      (await sql<Row[]>`select kind, status, count(*)::int as value from callback_deliveries group by 1, 2`).map((r) => ({
        ...r,
        outcome: CALLBACK_OUTCOMES[String(r.status)] ?? String(r.status).toLowerCase(),
      })),
  );
  fromDatabase(
    'kassa_callbacks_oldest_due_seconds',
    'Age of the oldest callback due and not being attempted, by kind: how far behind the dispatchers are (no sample: none due)',
    ['kind'],
    () => sql`select kind, extract(epoch from now() - min(next_attempt_at))::float8 as value from callback_deliveries
              where status = 'PENDING' and next_attempt_at <= now() and (locked_until is null or locked_until <= now()) group by 1`,
  );
  fromDatabase(
    'kassa_jobs_waiting',
    'Jobs due and not yet taken by a worker, by task (graphile-worker queue depth)',
    ['task'],
    () => sql`select task_identifier as task, count(*)::int as value from graphile_worker.jobs
              where locked_at is null and run_at <= now() and attempts < max_attempts group by 1`,
  );
  fromDatabase(
    'kassa_jobs_oldest_waiting_seconds',
    'Age of the oldest job due and not yet taken, by task: how far behind the workers are',
    ['task'],
    () => sql`select task_identifier as task, extract(epoch from now() - min(run_at))::float8 as value from graphile_worker.jobs
              where locked_at is null and run_at <= now() and attempts < max_attempts group by 1`,
  );
  fromDatabase(
    'kassa_jobs_failed',
    'Jobs that used all their attempts, by task (they stay in the queue for an operator)',
    ['task'],
    () => sql`select task_identifier as task, count(*)::int as value from graphile_worker.jobs where attempts >= max_attempts group by 1`,
  );
  // A payout the treasury cannot cover, or a node that refuses it, is retried with backoff: its job is then
  // neither waiting (its run_at is ahead) nor failed, so without this gauge a held withdrawal is invisible.
  fromDatabase(
    'kassa_jobs_retrying',
    'Jobs that failed and wait for their next attempt (once due they count as waiting), by task; for a payout task: a held withdrawal, refund or sweep, why in the job\'s last_error',
    ['task'],
    () => sql`select task_identifier as task, count(*)::int as value from graphile_worker.jobs
              where locked_at is null and attempts > 0 and attempts < max_attempts and run_at > now() group by 1`,
  );
  // Live payouts sent and not final on chain: they wait for their block to be deep enough. One waiting far
  // longer than its network's confirmations take (a node that dropped it, fees below the market, a stuck
  // nonce) holds a merchant's withdrawal or a customer's refund: the age is what an alert watches.
  fromDatabase(
    'kassa_payouts_unconfirmed',
    'Payouts sent and not yet final on chain (live mode: PROCESSING withdrawals, PENDING refunds, each with its transactionId), by kind and network',
    ['kind', 'network'],
    () => sql`select 'withdrawal' as kind, network, count(*)::int as value from withdrawals
               where status = 'PROCESSING' and transaction_id is not null group by network
              union all
              select 'refund', network, count(*)::int from refunds
               where status = 'PENDING' and sending_since is not null and transaction_id is not null group by network`,
  );
  fromDatabase(
    'kassa_payouts_oldest_unconfirmed_seconds',
    'Age of the oldest payout sent and not yet final on chain, since it was sent, by kind and network (no sample: none)',
    ['kind', 'network'],
    () => sql`select 'withdrawal' as kind, w.network, extract(epoch from now() - min(e.at))::float8 as value
                from withdrawals w join events e on e.entity_type = 'withdrawal' and e.entity_id = w.id and e.data ? 'transactionId'
               where w.status = 'PROCESSING' and w.transaction_id is not null group by w.network
              union all
              select 'refund', network, extract(epoch from now() - min(sending_since))::float8 from refunds
               where status = 'PENDING' and sending_since is not null and transaction_id is not null group by network`,
  );
  fromDatabase(
    'kassa_jobs_oldest_locked_seconds',
    'Age of the oldest job being run, by task: a job running far longer than its task does means a dead or hung worker',
    ['task'],
    () => sql`select task_identifier as task, extract(epoch from now() - min(locked_at))::float8 as value from graphile_worker.jobs
              where locked_at is not null group by 1`,
  );

  return registry;
}

/** GET /metrics as a route-table entry: token or loopback, then the registry's text. */
export function metricsRoute(registry: Registry, token: string | undefined, proxiesTrusted = false): AnyRoute {
  return defineRoute({
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    description:
      'Prometheus text format. With `KASSA_METRICS_TOKEN` set: send `Authorization: Bearer <token>` (401 otherwise). Without it: ' +
      'answered to loopback clients only (403 otherwise). Names start with `kassa_`: `kassa_payments_created{currency}`, ' +
      '`kassa_payments_finished{status,currency}`, `kassa_deposits_credited{currency,network}`, `kassa_callbacks{kind,outcome}`, ' +
      '`kassa_callbacks_oldest_due_seconds{kind}`, ' +
      '`kassa_jobs_waiting{task}`, `kassa_jobs_oldest_waiting_seconds{task}`, `kassa_jobs_failed{task}`, `kassa_jobs_retrying{task}`, ' +
      '`kassa_jobs_oldest_locked_seconds{task}`, `kassa_payouts_unconfirmed{kind,network}`, `kassa_payouts_oldest_unconfirmed_seconds{kind,network}` (read from PostgreSQL at ' +
      'scrape time), `kassa_http_request_duration_seconds{method,route}` and `kassa_http_requests_total` (this process).',
    auth: 'NONE',
    response: z.string(),
    responseType: 'text/plain; version=0.0.4',
    errors: [
      { status: 401, code: 'UNAUTHORIZED', when: 'KASSA_METRICS_TOKEN is set and the bearer token is missing or wrong' },
      { status: 403, code: 'METRICS_LOOPBACK_ONLY', when: 'KASSA_METRICS_TOKEN is not set and the client is not on loopback (or was forwarded by a proxy KASSA_TRUST_PROXY does not name)' },
    ],
    handler: async ({ request, reply }) => {
      if (token) {
        const header = request.headers.authorization ?? '';
        const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
        if (!safeEqual(given, token)) {
          throw new KassaError(401, 'UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <KASSA_METRICS_TOKEN>.', [], { 'www-authenticate': 'Bearer' });
        }
      } else if (!isLoopback(request.ip)) {
        throw new KassaError(403, 'METRICS_LOOPBACK_ONLY', 'Without KASSA_METRICS_TOKEN, /metrics answers loopback clients only; set the token to scrape it over the network.');
      } else if (!proxiesTrusted && (request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined)) {
        // A proxy on this host makes every client look like loopback: a forwarded request is not
        // known to be local unless KASSA_TRUST_PROXY names the proxy (then request.ip is the client).
        throw new KassaError(403, 'METRICS_LOOPBACK_ONLY', 'Without KASSA_METRICS_TOKEN, /metrics answers loopback clients only, and this request was forwarded by a proxy KASSA_TRUST_PROXY does not name: its client is unknown. Set the token, or name the proxy.');
      }
      reply.type(registry.contentType);
      return registry.metrics();
    },
  });
}
