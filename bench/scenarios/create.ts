/**
 * Scenarios 1 and 5. Signed `POST /v1/payments` at full speed from a closed loop of keep-alive
 * sockets (bench/load.ts, a new clientPaymentId and signature per request), against
 *  (a) the raw PostgreSQL rate of one single-row INSERT (autocommit: insert
 *      + commit in one round trip) per operation, through postgres.js with
 *      the same pool size and concurrency,
 *  (b) a bare Fastify route answering a constant (the framework ceiling), and
 *  (c) the HTTP floor: a bare Fastify route doing only (a)'s INSERT,
 * then the latency at half the maximum rate (autocannon; paced over sockets enough that a create is
 * sent when due, the target; then paced over the full-speed phase's 10 sockets; each paced phase
 * `pacedS`, 40 s by default, so that the kernel's writeback of what the full-speed phases wrote
 * weighs on its p99 as on a running Kassa's, not as on one 10 s window), and the same create on a
 * second Kassa logging at the default level (the first logs nothing, as the targets have always
 * been measured). The Kassa child's RSS is
 * sampled idle and every 100 ms while it is under load. Each contender (Kassa, the raw INSERT's pool,
 * the bare Fastify and its floor route) first runs `warmupS` of unmeasured full load, so that the first
 * measured phase is its steady state rather than its JIT's climb.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { signedCreates, type BenchContext } from '../context.js';
import { cpuMs, postgresCpuMeter, processCpuMeter, RssSampler, startKassa } from '../env.js';
import { runAutocannon, runClosedLoop, runHttpClosedLoop, runPaced, type LoadResult, type PacedResult } from '../load.js';
import { makeRow, type Row } from '../report.js';
import { batchRows, scrapeBatches } from '../batches.js';
import { AFTER_BURST_MS, BURST_BYTES, DiskWriteSampler, nearBursts, type Burst } from '../disk-bursts.js';
import { quantile, sleep, sumOrNull } from '../stats.js';

const S = '1 create';
/** The create's p99 target at half the max rate (paced and autocannon); the paced creates slower than it are set beside the disk's bursts. */
const HALF_RATE_P99_TARGET_MS = 25;
/**
 * Sockets of the paced phase the target is measured on: enough that a create is sent when it is due
 * rather than when one of them is free (a batch carries at most 64 creates), as k6's and vegeta's
 * open-model generators open connections as needed. Over the full-speed phase's 10, a stall of the
 * machine of ~25 ms fills every socket and the creates due next queue in the load generator, then
 * drain 10 at a time: in standalone paced runs at 1,200/s the slow creates had mostly been sent
 * 17–36 ms after they were due while Kassa's own histogram counted a dozen over 25 ms in 12,000, and
 * the p99 was 42–48 ms over 10 sockets against 24–34 ms over 32 (docs/performance-history.md,
 * twenty-third round). That queue is the client's; the 10-socket phase runs right after, its row
 * without target, for what a client keeping 10 sockets sees.
 */
const PACED_OPEN_CONNECTIONS = 64;
const M = '5 memory';

/** Access lines of creates in a log file so far (0 before it exists). */
function createLines(path: string): number {
  try {
    return readFileSync(path, 'utf8').match(/"method":"POST","url":"\/v1\/payments".*"msg":"request completed"/g)?.length ?? 0;
  } catch {
    return 0;
  }
}

/** The paced phase's slow creates against its disk bursts: how many were due in or just after one, and the bursts' sizes and times. */
function burstNote(bursts: Burst[] | null, slowDueAt: readonly number[], startMs: number): string {
  const slow = `${slowDueAt.length} creates over ${HALF_RATE_P99_TARGET_MS} ms`;
  if (!bursts) return `${slow}; the disks could not be read (/proc/diskstats)`;
  const list = bursts.map((b) => `${(b.bytes / 1e6).toFixed(1)} MB at ${((b.fromMs - startMs) / 1000).toFixed(2)} s`).join(', ');
  return `${slow}, ${nearBursts(slowDueAt, bursts)} of them due during a burst or in the ${AFTER_BURST_MS} ms after it${list ? `; bursts: ${list}` : ''}. A new 16 MB WAL segment or the kernel's writeback of data-file pages holds up the commits behind it (docs/performance-history.md, eighteenth round)`;
}

/** How many creates of a paced phase found every socket busy, and how many of its slow ones had. */
function queuedNote(result: PacedResult, connections: number): string {
  return `${result.queued.toLocaleString('en-US')} creates found all ${connections} connections busy when due and waited in the load generator for one; ${result.slowQueued} of the ${result.slowDueAt.length} over ${HALF_RATE_P99_TARGET_MS} ms had`;
}

export async function createScenario(ctx: BenchContext): Promise<Row[]> {
  const { options, business } = ctx;
  const kassa = await ctx.kassa();
  const runId = randomBytes(4).toString('hex');
  const build = signedCreates(business, `bench-${runId}`);
  /** Full speed: the closed loop of keep-alive sockets; at a fixed overall rate: autocannon (the issue's original half-rate measure). */
  const load = (url: string, overallRate?: number, durationS = options.durationS) => {
    const http = { url, method: 'POST', path: '/v1/payments', connections: options.connections, durationS, build } as const;
    return overallRate ? runAutocannon({ ...http, overallRate }) : runHttpClosedLoop(http);
  };
  /** Evenly paced at `rate` over `connections` sockets, the slow creates named. */
  const pace = (rate: number, connections: number) =>
    runPaced({ url: kassa.url, method: 'POST', path: '/v1/payments', connections, durationS: options.pacedS, rate, build, slowMs: HALF_RATE_P99_TARGET_MS });
  /** The limit: one single-row INSERT a call, `prefix` keeping each phase's client ids apart. */
  const rawInsert = (sql: postgres.Sql, prefix: string) => (i: number) =>
    sql`insert into bench_raw_insert (client_id, amount) values (${`${prefix}-${i}`}, ${'25.00'})`;
  /** Turns taken by two or three contenders: half a phase each, twice. */
  const turnS = Math.max(1, options.durationS / 2);
  /** `warmupS` of unmeasured full load, before a contender's first measured phase. */
  const warmUp = async (who: string, run: (durationS: number) => Promise<unknown>) => {
    if (options.warmupS <= 0) return;
    options.log(`  create: ${who} warm-up ${options.warmupS} s`);
    await run(options.warmupS);
  };
  /** Completed operations per second over a contender's turns. */
  const rate = (turn: { ok: number; s: number }) => (turn.s ? turn.ok / turn.s : null);

  // Idle: after start, before any request.
  const idleSampler = new RssSampler(kassa.pid);
  for (let i = 0; i < 10; i++) {
    idleSampler.sample();
    await sleep(options.durationS >= 5 ? 100 : 30);
  }
  const idle = quantile(idleSampler.samples, 0.5);

  const peak = new RssSampler(kassa.pid, 100).start();
  let max: LoadResult;
  let half: LoadResult;
  let paced: PacedResult;
  let pacedClosed: PacedResult;
  let bursts: Burst[] | null = null;
  let pacedStart = 0;
  let halfRate: number;
  let kassaCpu: number | null = null;
  let kassaPgCpu: number | null = null;
  let batchesBefore: Awaited<ReturnType<typeof scrapeBatches>> = {};
  let batchesAfter: Awaited<ReturnType<typeof scrapeBatches>> = {};
  try {
    await warmUp('Kassa', (s) => load(kassa.url, undefined, s));
    options.log(`  create: Kassa at full speed, ${options.durationS} s`);
    batchesBefore = await scrapeBatches(kassa.url);
    const cpu = processCpuMeter(kassa.pid);
    const pgCpu = postgresCpuMeter(ctx.db.url);
    max = await load(kassa.url);
    kassaCpu = cpu(max.ok);
    kassaPgCpu = pgCpu(max.ok);
    batchesAfter = await scrapeBatches(kassa.url);
    halfRate = Math.max(1, Math.floor(max.rps / 2));
    options.log(`  create: Kassa at half that rate (${halfRate} req/s, autocannon overallRate), ${options.durationS} s`);
    half = await load(kassa.url, halfRate);
    options.log(`  create: Kassa at half that rate (${halfRate} req/s, evenly paced over ${PACED_OPEN_CONNECTIONS} connections), ${options.pacedS} s`);
    const disk = new DiskWriteSampler().start();
    pacedStart = performance.now();
    try {
      paced = await pace(halfRate, PACED_OPEN_CONNECTIONS);
    } finally {
      bursts = disk.stop();
    }
    options.log(`  create: Kassa at half that rate, evenly paced over ${options.connections} connections, ${options.pacedS} s`);
    pacedClosed = await pace(halfRate, options.connections);
  } finally {
    peak.stop();
  }

  options.log(`  create: raw INSERT + COMMIT through postgres.js, ${options.durationS} s`);
  // One pool for the limit's phase and its turns below, as Kassa and the floor keep theirs: a fresh
  // pool's backends fault in the shared buffers they touch and plan again (alternating 5 s phases of
  // a warm and a fresh pool: 5,808/4,918, 5,767/5,817, 6,676/5,895 and 6,729/5,600 a second).
  const raw = postgres(ctx.db.url, { max: options.poolSize, onnotice: () => {} });
  const closeRaw = ctx.cleanup.add('raw INSERT pool', () => raw.end({ timeout: 5 }));
  await raw`create table if not exists bench_raw_insert (
    id uuid primary key default gen_random_uuid(),
    client_id text not null unique,
    amount numeric not null,
    created_at timestamptz not null default now())`;
  await warmUp('raw INSERT', (s) => runClosedLoop(rawInsert(raw, `${runId}-warm`), options.connections, s));
  const pgCpu = postgresCpuMeter(ctx.db.url);
  const insert = await runClosedLoop(rawInsert(raw, runId), options.connections, options.durationS);
  const rawPgCpu = pgCpu(insert.ok);

  options.log(`  create: bare Fastify constant route, ${options.durationS} s`);
  const fastify = await ctx.fastify();
  const floorLoad = (durationS: number) => runHttpClosedLoop({ url: fastify.url, method: 'POST', path: '/floor/v1/payments', connections: options.connections, durationS, build });
  await warmUp('bare Fastify, half on each route,', async (s) => {
    await load(fastify.url, undefined, s / 2);
    await floorLoad(s / 2);
  });
  const frameworkCpu = processCpuMeter(fastify.pid);
  const framework = await load(fastify.url);
  const fastifyCpu = frameworkCpu(framework.ok);
  options.log(`  create: bare Fastify route doing only the raw INSERT, ${options.durationS} s`);
  const floor = await floorLoad(options.durationS);

  // The same three in turns (half a phase each, twice), so that the machine's drift from one phase
  // to the next, ±0.1 of the ratio on this 2-vCPU machine, weighs on all three alike.
  options.log(`  create: Kassa, the raw INSERT and the HTTP floor taking turns, ${options.durationS * 3} s`);
  const inTurns = { kassa: { ok: 0, s: 0 }, insert: { ok: 0, s: 0 }, floor: { ok: 0, s: 0 } };
  for (let round = 0; round < 2; round++) {
    const results = {
      kassa: await load(kassa.url, undefined, turnS),
      insert: await runClosedLoop(rawInsert(raw, `${runId}-turn${round}`), options.connections, turnS),
      floor: await floorLoad(turnS),
    };
    for (const [name, result] of Object.entries(results) as [keyof typeof inTurns, LoadResult][]) {
      inTurns[name].ok += result.ok;
      inTurns[name].s += result.durationS;
    }
  }
  await closeRaw(); // done with it: the logging Kassa's turns below need no idle backends beside them

  // The Kassa above logs nothing (LOG_LEVEL=silent), as in every earlier round; a deployment logs at
  // the default level, one access line a request. A second Kassa does, into a file, and the two take
  // turns at full speed (half a phase each, twice), since this machine's speed drifts from one phase
  // to the next by more than what is compared.
  options.log(`  create: a second Kassa at the default LOG_LEVEL (info), its log into a file, taking turns with the first, ${options.durationS * 2} s`);
  const logDir = mkdtempSync(join(tmpdir(), 'kassa-bench-log-'));
  ctx.cleanup.add('log directory', async () => rmSync(logDir, { recursive: true, force: true }));
  const logFile = join(logDir, 'kassa.log');
  const logged = await startKassa(ctx.cleanup, ctx.db.url, { KASSA_MASTER_KEY: ctx.masterKeyHex, LOG_LEVEL: 'info' }, { nodeArgs: options.kassaNodeArgs, logFile });
  const turns = { silent: { ok: 0, errors: 0, s: 0, cpu: 0 }, info: { ok: 0, errors: 0, s: 0, cpu: 0 } };
  let accessLines = 0;
  try {
    await warmUp('the logging Kassa', (s) => load(logged.url, undefined, s));
    await sleep(1_000); // the log's buffer is written at least every 500 ms (server/platform/logger.ts)
    const linesBefore = createLines(logFile);
    for (let round = 0; round < 2; round++) {
      for (const [level, child] of [['silent', kassa], ['info', logged]] as const) {
        const c0 = cpuMs(child.pid);
        const result = await load(child.url, undefined, turnS);
        const c1 = cpuMs(child.pid);
        const turn = turns[level];
        turn.ok += result.ok;
        turn.errors += result.errors;
        turn.s += result.durationS;
        turn.cpu += c0 !== null && c1 !== null ? c1 - c0 : Number.NaN; // NaN: the CPU could not be read
      }
    }
    await sleep(1_000);
    accessLines = createLines(logFile) - linesBefore;
  } finally {
    await logged.stop();
  }
  const cpuPer = (turn: typeof turns.info) => (turn.ok && Number.isFinite(turn.cpu) ? turn.cpu / turn.ok : null);

  // What the machine spends on one operation, whichever process spends it. Kassa, PostgreSQL and the
  // load generator share its CPUs, and the rates have stood in the inverse ratio of these sums within
  // ~0.04 in every run since they were reported (nineteenth round, docs/performance-history.md).
  const machineCpu = sumOrNull(kassaCpu, kassaPgCpu, max.generatorCpuMs);
  const rawMachineCpu = sumOrNull(rawPgCpu, insert.generatorCpuMs);
  const cpuCount = cpus().length;
  const conc = `${options.connections} connections`;
  return [
    makeRow({ scenario: S, name: 'create payment vs raw INSERT+COMMIT', metric: `requests/s, ${conc}`, unit: 'req/s', kassa: max.rps, limit: insert.rps, target: { of: 'ratio', op: '>=', value: 0.5 }, digits: 0,
      note: `limit: one single-row INSERT (autocommit) per operation, postgres.js pool ${options.poolSize}, ${options.connections} concurrent callers` }),
    makeRow({ scenario: S, name: 'HTTP floor: bare Fastify + the raw INSERT, vs raw INSERT+COMMIT', metric: `requests/s, ${conc}`, unit: 'req/s', kassa: floor.rps, limit: insert.rps, digits: 0,
      note: `not Kassa: the same signed requests to a bare Fastify route whose only work is the limit's INSERT (${floor.errors} errors). Its ratio is the most any HTTP service doing that one statement reaches here, against the 0.5 asked of Kassa` }),
    makeRow({ scenario: S, name: 'create payment vs raw INSERT+COMMIT, in turns', metric: `requests/s, ${conc}, the three taking turns`, unit: 'req/s', kassa: rate(inTurns.kassa), limit: rate(inTurns.insert), digits: 0,
      note: `Kassa, the raw INSERT and the HTTP floor at full speed in turns of ${turnS} s, twice: the same comparison as the first row with the machine's drift between phases spread over all three` }),
    makeRow({ scenario: S, name: 'HTTP floor vs raw INSERT+COMMIT, in turns', metric: `requests/s, ${conc}, the three taking turns`, unit: 'req/s', kassa: rate(inTurns.floor), limit: rate(inTurns.insert), digits: 0 }),
    makeRow({ scenario: S, name: 'create payment vs bare Fastify', metric: `requests/s, ${conc}`, unit: 'req/s', kassa: max.rps, limit: framework.rps, digits: 0 }),
    makeRow({ scenario: S, name: 'create CPU per request vs bare Fastify', metric: 'server process CPU (user+sys) / 2xx, at max rate', unit: 'ms', kassa: kassaCpu, limit: fastifyCpu, digits: 3 }),
    makeRow({ scenario: S, name: 'create at the default LOG_LEVEL (info) vs silent', metric: `requests/s, ${conc}, two Kassas taking turns`, unit: 'req/s', kassa: rate(turns.info), limit: rate(turns.silent), digits: 0,
      note: `a second Kassa logging as a deployment does by default, into a file: ${accessLines.toLocaleString('en-US')} access lines of creates for ${turns.info.ok.toLocaleString('en-US')} creates and ${turns.info.errors} errors (a create in flight when a turn ended is logged, not counted); against the silent Kassa in the turns between` }),
    makeRow({ scenario: S, name: 'create CPU per request at the default LOG_LEVEL (info) vs silent', metric: 'server process CPU (user+sys) / 2xx, two Kassas taking turns', unit: 'ms', kassa: cpuPer(turns.info), limit: cpuPer(turns.silent), digits: 3 }),
    makeRow({ scenario: S, name: 'create PostgreSQL CPU per request vs per raw INSERT', metric: 'database server CPU (user+sys, all backends) / operation, at max rate', unit: 'ms', kassa: kassaPgCpu, limit: rawPgCpu, digits: 3 }),
    makeRow({ scenario: S, name: 'create CPU per request, Kassa + PostgreSQL + load generator, vs per raw INSERT', metric: 'CPU (user+sys) of the processes an operation runs in, summed, / operation, at max rate', unit: 'ms', kassa: machineCpu, limit: rawMachineCpu, digits: 3,
      ...(machineCpu !== null && rawMachineCpu !== null
        ? { note: `the three processes share this machine's ${cpuCount} CPUs: the raw INSERT costs ${(rawMachineCpu / machineCpu).toFixed(3)} of a create's CPU, beside a rate ratio of ${(max.rps / insert.rps).toFixed(3)}. The rates follow what an operation costs all processes together, so a rate ratio of 0.5 asks a create to cost about twice the raw INSERT's CPU at most` }
        : {}) }),
    makeRow({ scenario: S, name: 'create load generator CPU per request vs per raw INSERT', metric: 'bench process CPU (user+sys) / operation, at max rate', unit: 'ms', kassa: max.generatorCpuMs, limit: insert.generatorCpuMs, digits: 3,
      note: `the load generator runs on the same ${cpuCount} CPUs: a closed loop of ${options.connections} keep-alive sockets with a signed request built per request, against postgres.js callers for the limit` }),
    makeRow({ scenario: S, name: 'create latency p50 at max rate', metric: 'p50 latency (limit: raw insert)', unit: 'ms', kassa: max.p50, limit: insert.p50, digits: 2 }),
    makeRow({ scenario: S, name: 'create latency p95 at max rate', metric: 'p95 latency (limit: raw insert)', unit: 'ms', kassa: max.p95, limit: insert.p95, digits: 2 }),
    makeRow({ scenario: S, name: 'create latency p99 at max rate', metric: 'p99 latency (limit: raw insert)', unit: 'ms', kassa: max.p99, limit: insert.p99, digits: 2 }),
    ...batchRows(S, 'create at max rate', 'payment_create', batchesBefore, batchesAfter, max.p50),
    makeRow({ scenario: S, name: 'create errors at max rate', metric: 'non-2xx + socket errors', unit: 'count', kassa: max.errors, limit: null, digits: 0,
      ...(max.errors ? { note: `status codes ${JSON.stringify(max.statusCodes)}` } : {}) }),
    makeRow({ scenario: S, name: 'create latency p50 at half the max rate, paced', metric: 'p50 latency, evenly spaced arrivals', unit: 'ms', kassa: paced.p50, digits: 2,
      note: `half rate = ${halfRate} req/s for ${options.pacedS} s, one request every ${(1000 / halfRate).toFixed(1)} ms, each sent when due over up to ${PACED_OPEN_CONNECTIONS} keep-alive connections (sockets enough that a create is not held back for a free one), latency from the moment each was due; achieved ${Math.round(paced.rps)} req/s, ${paced.errors} errors` }),
    makeRow({ scenario: S, name: 'create latency p95 at half the max rate, paced', metric: 'p95 latency, evenly spaced arrivals', unit: 'ms', kassa: paced.p95, digits: 2 }),
    makeRow({ scenario: S, name: 'create latency p99 at half the max rate, paced', metric: 'p99 latency, evenly spaced arrivals', unit: 'ms', kassa: paced.p99, digits: 2, target: { of: 'kassa', op: '<=', value: HALF_RATE_P99_TARGET_MS },
      note: queuedNote(paced, PACED_OPEN_CONNECTIONS) }),
    makeRow({ scenario: S, name: `create latency p99 at half the max rate, paced over ${options.connections} connections`, metric: 'p99 latency, evenly spaced arrivals', unit: 'ms', kassa: pacedClosed.p99, digits: 2,
      note: `the same rate and schedule right after, over the full-speed phase's ${options.connections} keep-alive connections: p50 ${pacedClosed.p50?.toFixed(2)}, p95 ${pacedClosed.p95?.toFixed(2)} ms, achieved ${Math.round(pacedClosed.rps)} req/s, ${pacedClosed.errors} errors; ${queuedNote(pacedClosed, options.connections)}. No target: what a client keeping ${options.connections} sockets sees, a stall of the machine filling them and the creates due next queued in the client, then sent ${options.connections} at a time; ${options.pacedS} s after the target row's phase, so the disk's bursts fall elsewhere` }),
    makeRow({ scenario: S, name: 'disk write bursts during the paced create phase', metric: `50 ms samples in which the disks wrote ≥ ${BURST_BYTES / 1024 / 1024} MiB (/proc/diskstats)`, unit: 'count', kassa: bursts?.length ?? null, digits: 0,
      note: burstNote(bursts, paced.slowDueAt, pacedStart) }),
    makeRow({ scenario: S, name: 'create latency p50 at half the max rate, autocannon', metric: 'p50 latency, autocannon overallRate', unit: 'ms', kassa: half.p50, digits: 2,
      note: `autocannon overallRate ${halfRate} over ${Math.min(options.connections, halfRate)} connections: each connection sends its per-second share back to back at every second tick, so arrivals come in bursts; achieved ${Math.round(half.rps)} req/s, ${half.errors} errors` }),
    makeRow({ scenario: S, name: 'create latency p99 at half the max rate, autocannon', metric: 'p99 latency, autocannon overallRate', unit: 'ms', kassa: half.p99, digits: 2, target: { of: 'kassa', op: '<=', value: HALF_RATE_P99_TARGET_MS } }),
    makeRow({ scenario: M, name: 'Kassa server RSS idle (child process, server + worker)', metric: 'RSS before any request', unit: 'MiB', kassa: idle, target: { of: 'kassa', op: '<=', value: 150 } }),
    makeRow({ scenario: M, name: 'Kassa server RSS peak during create (child process)', metric: 'max RSS, sampled every 100 ms', unit: 'MiB', kassa: peak.max, target: { of: 'kassa', op: '<=', value: 300 } }),
  ];
}
