/**
 * `runBench(options)`: a fresh database, a bench business, Kassa as a child
 * process, then each scenario in turn; returns the report. Every process and
 * database it starts is stopped before it returns (or throws).
 */
import { cpus, totalmem } from 'node:os';
import { connect } from '../db/client.js';
import { createBenchBusiness, type BenchContext, type BenchOptions } from './context.js';
import { Cleanup, KASSA_BUNDLE, openBenchDatabase, startFastifyConstant, startKassa, startReceiver } from './env.js';
import type { Report, Row } from './report.js';
import { DEFAULT_CONCURRENCY } from '../jobs/worker.js';
import { callbacksScenario } from './scenarios/callbacks.js';
import { chainScanScenario } from './scenarios/chain-scan.js';
import { checkoutScenario, loadPlaywright } from './scenarios/checkout.js';
import { createScenario } from './scenarios/create.js';
import { readScenario } from './scenarios/read.js';
import { round } from './stats.js';

export const SCENARIOS = ['create', 'read', 'checkout', 'callbacks', 'scan'] as const;

export const DEFAULT_OPTIONS: BenchOptions = {
  durationS: 10,
  // A fresh Node process's create rate climbs for its first ~8-10 s at full load (the JIT): 536 ->
  // ~1,600 creates/s in 2 s slices. With 2 s, the first measured phase still held that climb.
  warmupS: 10,
  pacedS: 40,
  connections: 10,
  poolSize: 10,
  callbacks: 10_000,
  workerConcurrency: DEFAULT_CONCURRENCY,
  checkoutRuns: 20,
  scanBlocks: 1000,
  requireBrowser: false,
  only: [],
  kassaNodeArgs: [],
  log: () => {},
};

export type RunBenchOptions = Partial<BenchOptions> & {
  /** Use this database as it is (the caller owns it). */
  databaseUrl?: string;
  /** Create (and drop) a fresh database on this server. Neither: embedded PostgreSQL in a temporary directory. */
  adminUrl?: string;
  /** Receives the run's Cleanup at once, so a signal handler can stop everything started so far. */
  onCleanup?: (cleanup: Cleanup) => void;
};

export async function runBench(input: RunBenchOptions = {}): Promise<Report> {
  const { databaseUrl: _d, adminUrl: _a, onCleanup: _c, ...rest } = input;
  const options: BenchOptions = { ...DEFAULT_OPTIONS, ...stripUndefined(rest) };
  const cleanup = new Cleanup();
  input.onCleanup?.(cleanup);
  const notes: string[] = [];
  try {
    options.log('starting PostgreSQL and migrating');
    const db = await openBenchDatabase(cleanup, {
      ...(input.databaseUrl ? { databaseUrl: input.databaseUrl } : {}),
      ...(input.adminUrl ? { adminUrl: input.adminUrl } : {}),
    });
    if (db.note) notes.push(db.note);
    const database = connect(db.url, { max: options.poolSize });
    cleanup.add('bench pool', () => database.close());
    const { masterKeyHex, business } = await createBenchBusiness(database);

    const once = <T>(start: () => Promise<T>) => {
      let started: Promise<T> | null = null;
      const get = () => (started ??= start());
      get.started = () => started !== null;
      return get;
    };
    const kassa = once(() => {
      options.log(`starting Kassa (node ${KASSA_BUNDLE})`);
      return startKassa(cleanup, db.url, { KASSA_MASTER_KEY: masterKeyHex }, { nodeArgs: options.kassaNodeArgs, ...(options.kassaLog ? { logFile: options.kassaLog } : {}) });
    });
    const fastify = once(() => startFastifyConstant(cleanup, db.url, options.poolSize));
    const ctx: BenchContext = {
      options,
      cleanup,
      db,
      database,
      masterKeyHex,
      business,
      notes,
      kassa,
      fastify,
      receiver: once(() => startReceiver(cleanup)),
    };

    const selected = (name: string) => options.only.length === 0 || options.only.includes(name);
    // Start the processes (and load the browser driver) the selected scenarios need, side by side,
    // before anything is measured: idle helper processes do not disturb the measurements.
    const needsKassa = ['create', 'read', 'checkout'].some(selected);
    await Promise.all([
      needsKassa ? kassa() : null,
      selected('create') || selected('read') ? ctx.fastify() : null,
      selected('callbacks') ? ctx.receiver() : null,
      selected('checkout') ? loadPlaywright() : null,
    ]);
    const rows: Row[] = [];
    // The Kassa child (server + its worker) serves scenarios 1, 2 and 4; it is stopped before
    // scenario 3 so that only the measured worker takes the callback jobs (and the bare Fastify of
    // scenarios 1 and 2 with its connections, so that nothing else holds the database).
    if (selected('create')) rows.push(...(await step(options, 'create', () => createScenario(ctx))));
    if (selected('read')) rows.push(...(await step(options, 'read', () => readScenario(ctx))));
    if (selected('checkout')) rows.push(...(await step(options, 'checkout', () => checkoutScenario(ctx))));
    if (kassa.started()) await (await kassa()).stop();
    if (fastify.started()) await (await fastify()).stop();
    if (selected('callbacks')) rows.push(...(await step(options, 'callbacks', () => callbacksScenario(ctx))));
    if (selected('scan')) rows.push(...(await step(options, 'scan', () => chainScanScenario(ctx))));
    rows.sort((a, b) => a.scenario.localeCompare(b.scenario));

    notes.push(
      `Load generator (in the bench process: keep-alive sockets at full speed and evenly paced, autocannon at a fixed rate), Kassa (a child process) and PostgreSQL share the same ${cpus().length} CPUs; ` +
        'each limit is measured the same way in the same run, so the ratios are the comparable part.',
    );
    return {
      generatedAt: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGiB: round(totalmem() / 2 ** 30, 1) ?? 0,
        node: process.versions.node,
        postgres: db.postgresVersion,
      },
      options: {
        durationS: options.durationS,
        pacedS: options.pacedS,
        connections: options.connections,
        poolSize: options.poolSize,
        callbacks: options.callbacks,
        workerConcurrency: options.workerConcurrency,
        checkoutRuns: options.checkoutRuns,
        scanBlocks: options.scanBlocks,
      },
      scenarios: rows,
      notes,
    };
  } finally {
    options.log('stopping everything started');
    await cleanup.runAll(options.log);
  }
}

async function step(options: BenchOptions, name: string, run: () => Promise<Row[]>): Promise<Row[]> {
  const started = performance.now();
  options.log(`scenario ${name}`);
  const rows = await run();
  options.log(`scenario ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return rows;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
