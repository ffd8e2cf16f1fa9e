/**
 * `npm run soak [-- options]` (issue 7.8): Kassa (web + worker, `server/main.ts`
 * as a child process) on a fresh database, the maximum rate of the mix measured
 * briefly, then the steady mix at half that rate — fiat payments, crypto
 * payments with a sandbox deposit, withdrawals — with payment and withdrawal
 * callbacks to a local receiver. Checks: zero errors, flat memory (RSS
 * sampled every second, least-squares slope reported), every callback
 * delivered, ledger = balances. Then the long versions of the reliability
 * suites (fuzzing 10,000 requests, crash safety with 1,000 callbacks,
 * 100 iterations of every race) via vitest with KASSA_SOAK=1.
 *
 *   --duration-s <s>   length of the steady phase (300)
 *   --rate <n>         operations per second (default: half the measured maximum rate of the mix)
 *   --max-s <s>        length of the maximum-rate measurement (5)
 *   --connections <n>  HTTP connections (10)
 *   --skip-long        do not run the long versions of the reliability suites
 *   --out <file>       report path (soak/report.json)
 *
 * Writes soak/report.json ({machine, options, scenarios:[{name, metric, unit, kassa, limit, ratio, …}], checks})
 * and prints a summary; exits 1 when a check fails. Everything runs on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { Cleanup, openBenchDatabase, ROOT, rssMiB, startKassa } from '../bench/env.js';
import { runClosedLoop } from '../bench/load.js';
import { makeRow, type Machine, type Row } from '../bench/report.js';
import { percentiles, round, sleep } from '../bench/stats.js';
import { connect } from '../db/client.js';
import { createBusiness } from '../server/modules/businesses/index.js';
import { authorizationHeader } from '../server/edges/rest/signature.rules.js';
import { postEntries } from '../server/modules/ledger/index.js';
import { generateMasterKey, parseMasterKey } from '../server/platform/secrets.js';

const { values } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '300' },
    rate: { type: 'string' },
    'max-s': { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'skip-long': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'soak/report.json') },
  },
});

const positive = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return n;
};

const DURATION_S = positive('duration-s', values['duration-s'])!;
const MAX_S = positive('max-s', values['max-s'])!;
const CONNECTIONS = Math.floor(positive('connections', values.connections)!);
const RATE = positive('rate', values.rate);
const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const started = performance.now();
const log = (message: string) => process.stderr.write(`[soak ${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`);

type Check = { name: string; ok: boolean; detail: string };
const checks: Check[] = [];
const check = (name: string, ok: boolean, detail: string) => {
  checks.push({ name, ok, detail });
  log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
};

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  if (sxx === 0) return null;
  return points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
}

/** The callback receiver: records webhook-ids, answers 200 (and 500 to one request in 50, to exercise retries). */
function startReceiver(cleanup: Cleanup): Promise<{ url: string; ids: Map<string, number>; delivered: Set<string>; requests: () => number }> {
  const ids = new Map<string, number>();
  const delivered = new Set<string>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      const id = String(req.headers['webhook-id'] ?? '');
      const n = (ids.get(id) ?? 0) + 1;
      ids.set(id, n);
      const fail = n === 1 && requests % 50 === 0;
      if (!fail) delivered.add(id);
      res.writeHead(fail ? 500 : 200).end();
    });
  });
  cleanup.add('callback receiver', async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return new Promise((resolveReady) =>
    server.listen(0, '127.0.0.1', () => resolveReady({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, ids, delivered, requests: () => requests })),
  );
}

type LongResult = { file: string; passed: number; failed: number; durationS: number; failures: string[] };

/** The long versions of the reliability suites: vitest with KASSA_SOAK=1, results from its JSON reporter. */
async function runLongSuites(): Promise<{ results: LongResult[]; exitCode: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'kassa-soak-'));
  const outputFile = join(dir, 'vitest.json');
  const files = ['test/reliability/fuzz.integration.test.ts', 'test/reliability/crash.integration.test.ts', 'test/reliability/concurrency.integration.test.ts'];
  log(`long versions: vitest run ${files.join(' ')} (KASSA_SOAK=1)`);
  const child = spawn(resolve(ROOT, 'node_modules/.bin/vitest'), ['run', ...files, '--reporter=default', '--reporter=json', `--outputFile.json=${outputFile}`], {
    cwd: ROOT,
    env: { ...process.env, KASSA_SOAK: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exitCode = await new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const results: LongResult[] = [];
  try {
    const report = JSON.parse(readFileSync(outputFile, 'utf8')) as {
      testResults: { name: string; startTime: number; endTime: number; assertionResults: { status: string; fullName: string; failureMessages: string[] }[] }[];
    };
    for (const file of report.testResults) {
      const failed = file.assertionResults.filter((a) => a.status === 'failed');
      results.push({
        file: file.name.replace(`${ROOT}`, '').replace(/^\//, ''),
        passed: file.assertionResults.filter((a) => a.status === 'passed').length,
        failed: failed.length,
        durationS: round((file.endTime - file.startTime) / 1000, 1) ?? 0,
        failures: failed.map((f) => `${f.fullName}: ${(f.failureMessages[0] ?? '').split('\n')[0]!.slice(0, 300)}`),
      });
    }
  } catch (error) {
    log(`could not read the vitest report: ${(error as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { results, exitCode };
}

async function main(): Promise<void> {
  const cleanup = new Cleanup();
  const stopAll = async (signal: string) => {
    log(`${signal}: stopping`);
    await cleanup.runAll(log);
    process.exit(130);
  };
  process.once('SIGINT', () => void stopAll('SIGINT'));
  process.once('SIGTERM', () => void stopAll('SIGTERM'));

  const rows: Row[] = [];
  let machine: Machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', memoryGiB: round(totalmem() / 2 ** 30, 1) ?? 0, node: process.versions.node, postgres: null };
  const options = { durationS: DURATION_S, rate: RATE ?? null, maxS: MAX_S, connections: CONNECTIONS, skipLong: values['skip-long'] };
  try {
    log('starting PostgreSQL and migrating');
    const db = await openBenchDatabase(cleanup, process.env.DATABASE_URL ? { adminUrl: process.env.DATABASE_URL } : {});
    machine = { ...machine, postgres: db.postgresVersion };
    const database = connect(db.url, { max: 4 });
    cleanup.add('soak pool', () => database.close());
    const masterKeyHex = generateMasterKey();
    const receiver = await startReceiver(cleanup);
    const created = await createBusiness(database.db, parseMasterKey(masterKeyHex), {
      name: 'Soak shop',
      paymentCallbackUrl: `${receiver.url}/payments`,
      withdrawalCallbackUrl: `${receiver.url}/withdrawals`,
    });
    const business = { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret };
    await postEntries(database.db, [{ businessId: business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000000000.00', kind: 'SOAK' }], new Date());

    log('starting Kassa (web + worker)');
    const kassa = await startKassa(cleanup, db.url, {
      KASSA_MASTER_KEY: masterKeyHex,
      KASSA_SANDBOX_CONFIRM_DELAY_S: '1',
      KASSA_SANDBOX_BROADCAST_DELAY_S: '1',
      KASSA_CALLBACK_RETRY_INTERVAL_S: '1',
      KASSA_CALLBACK_TIMEOUT_MS: '5000',
    });
    const runId = randomBytes(4).toString('hex');
    let seq = 0;
    const signedRequest = (method: 'POST' | 'GET', path: string, bodyObject?: unknown) => {
      const body = bodyObject === undefined ? undefined : JSON.stringify(bodyObject);
      const headers: Record<string, string> = { authorization: authorizationHeader(business.apiKey, business.apiSecret, { method, path, body: body ?? '' }) };
      if (body !== undefined) headers['content-type'] = 'application/json';
      return { body, headers };
    };
    const fiatBody = () => ({ clientPaymentId: `soak-${runId}-${++seq}`, businessId: business.businessId, locale: 'en-US', displayCurrency: 'EUR', displayAmount: '25.00' });

    // The mix, and the pool it is sent over.
    const pool = new Pool(kassa.url, { connections: CONNECTIONS, pipelining: 1 });
    cleanup.add('HTTP pool', () => pool.close());
    const counts = { fiat: 0, crypto: 0, deposit: 0, withdrawal: 0 };
    const errors: string[] = [];
    let errorCount = 0;
    const latencies: number[] = [];
    const send = async (method: 'POST' | 'GET', path: string, bodyObject?: unknown): Promise<Record<string, unknown>> => {
      const { body, headers } = signedRequest(method, path, bodyObject);
      const t0 = performance.now();
      const res = await pool.request({ method, path, headers, ...(body !== undefined ? { body } : {}), headersTimeout: 30_000, bodyTimeout: 30_000 });
      const text = await res.body.text();
      latencies.push(performance.now() - t0);
      if (res.statusCode !== 200) throw new Error(`${method} ${path} → ${res.statusCode} ${text.slice(0, 200)}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const operation = async (i: number) => {
      const kind = i % 10;
      if (kind === 3) {
        // a crypto-priced payment and its deposit (confirmed by the worker after 1 s: payment callbacks follow)
        const p = (await send('POST', '/v1/payments', { ...fiatBody(), displayCurrency: undefined, displayAmount: undefined, depositCurrency: 'BTC', depositAmount: '0.0005', network: 'BTC' })) as { paymentInfo: { paymentId: string } };
        counts.crypto++;
        await send('POST', `/v1/test-helpers/payments/${p.paymentInfo.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.0005' });
        counts.deposit++;
      } else if (kind === 7) {
        await send('POST', '/v1/withdrawals', { clientWithdrawalId: `soak-w-${runId}-${++seq}`, businessId: business.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.001' });
        counts.withdrawal++;
      } else {
        await send('POST', '/v1/payments', fiatBody());
        counts.fiat++;
      }
    };
    // 1. The maximum rate of this same mix, briefly (closed loop, 4 callers a connection, so that
    // the waits inside an operation — a deposit is confirmed by the worker — leave no connection idle): the steady
    // phase runs at half of it. Half the maximum *create* rate (as before) overloaded this machine,
    // since a tenth of the mix is a crypto payment with its deposit and a tenth a withdrawal.
    let rate = RATE;
    if (!rate) {
      log(`measuring the maximum rate of the mix for ${MAX_S} s`);
      let failed = 0;
      const max = await runClosedLoop(async (i) => {
        try {
          await operation(i);
        } catch (error) {
          if (++failed <= 3) errors.push(`maximum-rate phase: ${(error as Error).message}`);
          throw error;
        }
      }, CONNECTIONS * 4, MAX_S);
      rows.push(makeRow({ scenario: 'soak', name: 'maximum rate of the mix (brief, closed loop)', metric: 'throughput', unit: 'op/s', kassa: max.rps, note: `${CONNECTIONS * 4} concurrent callers over ${CONNECTIONS} connections, ${max.errors} errors` }));
      if (max.errors) check('maximum-rate phase without errors', false, `${max.errors} errors: ${errors.join('; ')}`);
      rate = Math.max(1, Math.floor(max.rps / 2));
      // What the steady phase counts starts after this.
      Object.assign(counts, { fiat: 0, crypto: 0, deposit: 0, withdrawal: 0 });
      latencies.length = 0;
      errors.length = 0;
    }
    log(`steady mix at ${rate} operations/s for ${DURATION_S} s`);

    // 2. The steady mix.
    const rss: { x: number; y: number }[] = [];
    const steadyStart = performance.now();
    const sampler = setInterval(() => {
      const v = rssMiB(kassa.pid);
      if (v !== null) rss.push({ x: (performance.now() - steadyStart) / 60_000, y: v });
    }, 1000);
    const inFlight = new Set<Promise<void>>();
    let maxInFlight = 0;
    const interval = 1000 / rate;
    let scheduled = 0;
    let lastProgress = performance.now();
    for (let i = 0; ; i++) {
      const due = steadyStart + i * interval;
      if (due >= steadyStart + DURATION_S * 1000) break;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      scheduled++;
      const p = operation(i).catch((error: unknown) => {
        errorCount++;
        if (errors.length < 20) errors.push((error as Error).message);
      });
      inFlight.add(p);
      maxInFlight = Math.max(maxInFlight, inFlight.size);
      void p.finally(() => inFlight.delete(p));
      if (performance.now() - lastProgress > 10_000) {
        lastProgress = performance.now();
        log(`  ${scheduled} operations, ${errorCount} errors, ${inFlight.size} in flight, RSS ${rss.at(-1)?.y.toFixed(1) ?? '?'} MiB`);
      }
    }
    await Promise.all(inFlight);
    const steadyS = (performance.now() - steadyStart) / 1000;
    clearInterval(sampler);

    // 3. Drain: every callback delivered, every withdrawal and deposit settled.
    log('draining: waiting for every callback, deposit and withdrawal to settle');
    type Progress = { deliveries: number; delivered: number; pending_withdrawals: number; unconfirmed: number };
    const progress = async (): Promise<Progress> => {
      const [row] = await database.sql<Progress[]>`
        select (select count(*)::int from callback_deliveries) as deliveries,
               (select count(*)::int from callback_deliveries where status = 'DELIVERED') as delivered,
               (select count(*)::int from withdrawals where status not in ('COMPLETED', 'FAILED', 'BLOCKED', 'REJECTED')) as pending_withdrawals,
               (select count(*)::int from deposits where status = 'UNCONFIRMED') as unconfirmed`;
      return row!;
    };
    const drainStart = performance.now();
    let last = await progress();
    while (performance.now() - drainStart < 180_000) {
      last = await progress();
      if (last.pending_withdrawals === 0 && last.unconfirmed === 0 && last.delivered === last.deliveries) break;
      await sleep(500);
    }
    const drainS = (performance.now() - drainStart) / 1000;
    const receivedIds = [...receiver.delivered].filter((id) => id);
    const ids = await database.sql<{ webhook_id: string }[]>`select webhook_id from callback_deliveries`;
    const missing = ids.filter((r) => !receiver.delivered.has(r.webhook_id)).length;
    const duplicates = [...receiver.ids.values()].filter((n) => n > 1).length;

    // 4. Invariants.
    const [ledger] = await database.sql<{ mismatched: number; negative: number }[]>`
      select (select count(*)::int from balances b
              full join (select business_id, account, currency, sum(amount) as total from ledger_entries group by 1, 2, 3) e
                on e.business_id = b.business_id and e.account = b.account and e.currency = b.currency
              where coalesce(b.amount, 0) <> coalesce(e.total, 0)) as mismatched,
             (select count(*)::int from balances where amount < 0) as negative`;

    // 5. Memory, after the first fifth of the steady phase (start-up, JIT and heap warm-up): the slope of
    // every sample, and — what a leak raises — the slope of the floor, the lowest RSS of each 20 s window
    // (the level the garbage collector gets back to; single samples swing by tens of MiB with each GC).
    const settledRss = rss.filter((p) => p.x >= (steadyS / 60) * 0.2);
    const rssSlope = slope(settledRss);
    const windows = new Map<number, { x: number; y: number }>();
    for (const p of settledRss) {
      const w = Math.floor((p.x * 60) / 20);
      const current = windows.get(w);
      if (!current || p.y < current.y) windows.set(w, p);
    }
    const floor = [...windows.values()].sort((a, b) => a.x - b.x);
    const floorSlope = slope(floor);
    const rssFirst = settledRss[0]?.y ?? null;
    const rssLast = settledRss.at(-1)?.y ?? null;
    const spanMin = (steadyS / 60) * 0.8;
    const floorGrowth = floorSlope !== null ? floorSlope * spanMin : null;

    const lat = percentiles(latencies);
    const operations = counts.fiat + counts.crypto + counts.withdrawal;
    rows.push(
      makeRow({ scenario: 'soak', name: 'steady mix: achieved vs planned rate', metric: 'throughput', unit: 'op/s', kassa: operations / steadyS, limit: rate, note: `${counts.fiat} fiat payments, ${counts.crypto} crypto payments + ${counts.deposit} deposits, ${counts.withdrawal} withdrawals in ${round(steadyS, 1)} s` }),
      makeRow({ scenario: 'soak', name: 'errors during the steady mix', metric: 'count', unit: 'requests', kassa: errorCount, limit: scheduled, digits: 0, target: { of: 'kassa', op: '<=', value: 0 } }),
      makeRow({ scenario: 'soak', name: 'request latency p50', metric: 'latency', unit: 'ms', kassa: lat.p50 }),
      makeRow({ scenario: 'soak', name: 'request latency p99', metric: 'latency', unit: 'ms', kassa: lat.p99 }),
      makeRow({ scenario: 'soak', name: 'RSS slope, every sample (after the first fifth)', metric: 'memory', unit: 'MiB/min', kassa: rssSlope, digits: 2, note: `RSS ${round(rssFirst, 1)} → ${round(rssLast, 1)} MiB, min ${round(Math.min(...settledRss.map((p) => p.y)), 1)}, max ${round(Math.max(...settledRss.map((p) => p.y)), 1)}, ${settledRss.length} samples` }),
      makeRow({ scenario: 'soak', name: 'RSS floor slope (lowest RSS per 20 s window)', metric: 'memory', unit: 'MiB/min', kassa: floorSlope, digits: 2, note: `${floor.length} windows: ${floor.map((p) => round(p.y, 0)).join(' ')}` }),
      makeRow({ scenario: 'soak', name: 'RSS floor growth over the steady phase (fitted)', metric: 'memory', unit: 'MiB', kassa: floorGrowth, limit: rssFirst, digits: 1 }),
      makeRow({ scenario: 'soak', name: 'most operations in flight at once', metric: 'backlog', unit: 'operations', kassa: maxInFlight, limit: rate, digits: 0, note: 'limit = one second of load; far above it, Kassa fell behind the planned rate' }),
      makeRow({ scenario: 'soak', name: 'callbacks delivered', metric: 'count', unit: 'callbacks', kassa: last.delivered, limit: last.deliveries, digits: 0, target: { of: 'ratio', op: '>=', value: 1 }, note: `${receiver.requests()} requests, ${duplicates} webhook-ids sent more than once (same id), drained in ${round(drainS, 1)} s` }),
    );
    check('zero errors in the steady mix', errorCount === 0, errorCount ? `${errorCount} errors, e.g. ${errors.slice(0, 3).join(' | ')}` : `${scheduled} operations`);
    check('the planned rate was kept', operations / steadyS >= rate * 0.9, `${round(operations / steadyS, 1)} of ${rate} op/s`);
    // Flat: the fitted growth of the floor stays under 10 % of the starting RSS (at least 20 MiB). A run shorter than
    // two minutes is mostly V8 warming up its heap: the slope is reported but not judged.
    const allowed = Math.max(20, (rssFirst ?? 0) * 0.1);
    const memoryDetail = `floor slope ${round(floorSlope, 2)} MiB/min, fitted floor growth ${round(floorGrowth, 1)} MiB (allowed ${round(allowed, 1)}); all samples: slope ${round(rssSlope, 2)} MiB/min`;
    if (steadyS < 120 || floor.length < 4) log(`NOTE flat memory not judged on a ${round(steadyS, 0)} s run (needs ≥ 120 s): ${memoryDetail}`);
    else check('flat memory', floorGrowth !== null && floorGrowth < allowed, memoryDetail);
    check('every callback delivered', last.delivered === last.deliveries && missing === 0 && last.deliveries > 0, `${last.delivered}/${last.deliveries} DELIVERED, ${missing} never answered 2xx at the receiver (${receivedIds.length} ids seen)`);
    check('every withdrawal and deposit settled', last.pending_withdrawals === 0 && last.unconfirmed === 0, `${last.pending_withdrawals} withdrawals, ${last.unconfirmed} deposits still open`);
    check('ledger = balances, none negative', ledger!.mismatched === 0 && ledger!.negative === 0, `${ledger!.mismatched} mismatched, ${ledger!.negative} negative`);
    check('Kassa still running', kassa.process.exitCode === null, kassa.process.exitCode === null ? 'yes' : `exited ${kassa.process.exitCode}: ${kassa.output()}`);
  } finally {
    await cleanup.runAll(log);
  }

  // 6. The long versions of the reliability suites.
  let long: { results: LongResult[]; exitCode: number | null } | null = null;
  if (!values['skip-long']) {
    long = await runLongSuites();
    for (const r of long.results) {
      rows.push(makeRow({ scenario: 'long', name: r.file, metric: 'tests passed', unit: 'tests', kassa: r.passed, limit: r.passed + r.failed, digits: 0, target: { of: 'ratio', op: '>=', value: 1 }, note: `${r.durationS} s` }));
      check(`long: ${r.file}`, r.failed === 0, r.failed ? r.failures.join(' | ') : `${r.passed} passed in ${r.durationS} s`);
    }
    if (long.results.length === 0) check('long versions ran', false, `vitest exited ${long.exitCode} without a report`);
  }

  const report = { generatedAt: new Date().toISOString(), machine, options, scenarios: rows, checks };
  writeFileSync(values.out!, `${JSON.stringify(report, null, 2)}\n`);
  const failed = checks.filter((c) => !c.ok);
  process.stdout.write(
    [
      `Soak: ${DURATION_S} s steady mix${RATE ? ` at ${RATE} op/s` : ''}; report in ${values.out}`,
      '',
      '| name | metric | Kassa | limit | ratio | unit |',
      '|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.name} | ${r.metric} | ${r.kassa ?? '—'} | ${r.limit ?? '—'} | ${r.ratio ?? '—'} | ${r.unit} |`),
      '',
      ...checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`),
      '',
      `${checks.length - failed.length} passed, ${failed.length} failed`,
      '',
    ].join('\n'),
  );
  process.exit(failed.length ? 1 : 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
