/**
 * Scenario 2. Signed `GET /v1/payments/:id` of a payment with three
 * deposits, against the raw rate of one primary-key SELECT of that payment
 * through postgres.js (same pool size, same concurrency), and the HTTP
 * floor: a bare Fastify route doing only that SELECT.
 */
import postgres from 'postgres';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { createCryptoPayment, simulateDepositOverHttp, type BenchContext } from '../context.js';
import { postgresCpuMeter, processCpuMeter } from '../env.js';
import { runClosedLoop, runHttpClosedLoop } from '../load.js';
import { makeRow, type Row } from '../report.js';
import { batchRows, scrapeBatches } from '../batches.js';

const S = '2 read';

export async function readScenario(ctx: BenchContext): Promise<Row[]> {
  const { options, business } = ctx;
  const kassa = await ctx.kassa();
  const { paymentId } = await createCryptoPayment(kassa.url, business, `bench-read-${Date.now()}`);
  for (const amount of ['0.0003', '0.0004', '0.0005']) await simulateDepositOverHttp(kassa.url, business, paymentId, amount);
  const path = `/v1/payments/${paymentId}`;
  // The same signed GET of the payment, to Kassa or (under `prefix`) to the bare Fastify floor.
  const load = (url: string, prefix = '') =>
    runHttpClosedLoop({
      url,
      method: 'GET',
      path: `${prefix}${path}`,
      connections: options.connections,
      durationS: options.durationS,
      build: () => ({ headers: { authorization: authorizationHeader(business.apiKey, business.apiSecret, { method: 'GET', path }) } }),
    });

  options.log(`  read: Kassa GET ${path}, ${options.durationS} s`);
  const batchesBefore = await scrapeBatches(kassa.url);
  const readCpu = processCpuMeter(kassa.pid);
  const pgReadCpu = postgresCpuMeter(ctx.db.url);
  const read = await load(kassa.url);
  const cpuPerRead = readCpu(read.ok);
  const pgCpuPerRead = pgReadCpu(read.ok);
  const batchesAfter = await scrapeBatches(kassa.url);

  options.log(`  read: raw primary-key SELECT through postgres.js, ${options.durationS} s`);
  const raw = postgres(ctx.db.url, { max: options.poolSize, onnotice: () => {} });
  let select;
  let pgCpuPerSelect: number | null = null;
  try {
    const pgCpu = postgresCpuMeter(ctx.db.url);
    select = await runClosedLoop(() => raw`select * from payments where id = ${paymentId}`, options.connections, options.durationS);
    pgCpuPerSelect = pgCpu(select.ok);
  } finally {
    await raw.end({ timeout: 5 });
  }

  options.log(`  read: bare Fastify route doing only the raw SELECT, ${options.durationS} s`);
  const fastify = await ctx.fastify();
  const floor = await load(fastify.url, '/floor');

  return [
    makeRow({ scenario: S, name: 'HTTP floor: bare Fastify + the raw SELECT, vs raw PK SELECT', metric: `requests/s, ${options.connections} connections`, unit: 'req/s', kassa: floor.rps, limit: select.rps, digits: 0,
      note: `not Kassa: the same signed requests to a bare Fastify route whose only work is the limit's SELECT, answered as JSON (${floor.errors} errors). Its ratio is the most any HTTP service doing that one statement reaches here, against the 0.5 asked of Kassa` }),
    makeRow({ scenario: S, name: 'read payment (3 deposits) vs raw PK SELECT', metric: `requests/s, ${options.connections} connections`, unit: 'req/s', kassa: read.rps, limit: select.rps, digits: 0, target: { of: 'ratio', op: '>=', value: 0.5 },
      note: `${read.errors} errors; limit: one SELECT * FROM payments WHERE id = $1 per operation, pool ${options.poolSize}` }),
    makeRow({ scenario: S, name: 'read CPU per request', metric: 'server process CPU (user+sys) / 2xx', unit: 'ms', kassa: cpuPerRead, digits: 3 }),
    makeRow({ scenario: S, name: 'read PostgreSQL CPU per request vs per raw SELECT', metric: 'database server CPU (user+sys, all backends) / operation', unit: 'ms', kassa: pgCpuPerRead, limit: pgCpuPerSelect, digits: 3 }),
    makeRow({ scenario: S, name: 'read latency p50', metric: 'p50 latency (limit: raw select)', unit: 'ms', kassa: read.p50, limit: select.p50, digits: 2 }),
    ...batchRows(S, 'read', 'payment_read_stamp', batchesBefore, batchesAfter, read.p50),
    makeRow({ scenario: S, name: 'read latency p99', metric: 'p99 latency (limit: raw select)', unit: 'ms', kassa: read.p99, limit: select.p99, digits: 2 }),
  ];
}
