/**
 * Entry point of `npm start`: config → database → worker → http, and a
 * graceful shutdown on SIGTERM/SIGINT. `--role=web` or `--role=worker` runs
 * one half; the default runs both in one process. Live mode adds
 * `--role=signer`: the only process that reads KASSA_SIGNER_MNEMONIC_FILE,
 * running payouts and sweeps (the combined process does too when the file
 * is set).
 */
import { parseArgs } from 'node:util';
import type { Runner } from 'graphile-worker';
import { EmbeddedDatabaseError } from '../db/embedded.js';
import { startWorker } from '../jobs/worker.js';
import { survivingJobReleaseFailures } from '../jobs/release-failures.js';
import { createServer, type KassaServer } from './edges/app.js';
import { createDemoBusinessIfEmpty, demoBanner, productionHint } from './modules/businesses/index.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { tuneHeapGrowth } from './platform/heap-growth.js';
import { flushLog } from './platform/logger.js';
import { buildDeps, buildLiveDeps, openKassaDatabase } from './compose.js';
import { signsIn } from './adapters/chain/live/live-chains.js';
import type { TaskSelection } from '../jobs/worker.js';

/** How long running jobs may take to finish at shutdown before the process stops anyway. */
const JOBS_GRACE_MS = 10_000;

/** A URL with its password hidden, for banners and logs. */
function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function main(): Promise<void> {
  // Fewer, later full collections under load (platform/heap-growth.ts), unless the operator chose.
  tuneHeapGrowth();
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
  const role = values.role;
  if (role !== 'all' && role !== 'web' && role !== 'worker' && role !== 'signer') {
    throw new ConfigError(`--role must be web, worker, signer or all, not ${role}`);
  }

  const config = loadConfig();
  if (role === 'signer' && config.sandbox) throw new ConfigError('--role=signer is for live mode (KASSA_SANDBOX=false): the sandbox signs nothing.');
  if (role !== 'all' && !config.databaseUrl) {
    // The embedded database belongs to one process: a second role would wait on it forever.
    throw new ConfigError(`--role=${role} needs DATABASE_URL: split roles share one PostgreSQL (run without --role to use the embedded one).`);
  }
  const { masterKey, opened, database } = await openKassaDatabase(config, { max: 10, adoptOrphan: true, server: true });
  let deps;
  try {
    deps = config.sandbox ? buildDeps(config, database, masterKey) : await buildLiveDeps(config, database, masterKey, role);
  } catch (error) {
    await database.close().catch(() => {});
    await opened.stop().catch(() => {});
    throw error;
  }
  const log = deps.log;
  // Banners go to stdout after the log lines before them (the log is buffered: platform/logger.ts).
  const print = async (text: string) => {
    await flushLog(log);
    process.stdout.write(text);
  };
  if (opened.adopted) {
    // A warning: the Kassa before this one ended without stopping its database (a kill -9, a crash, the machine).
    log.warn({ pid: opened.adopted }, `took over the embedded PostgreSQL (pid ${opened.adopted}) that a Kassa killed without stopping it left running; it stops with this process`);
  }
  // graphile-worker leaves a failed job release unhandled (jobs/release-failures.ts): logged, not fatal.
  process.on('unhandledRejection', survivingJobReleaseFailures(log));
  // Live: payouts and sweeps run only where the keys are (the signer, or a combined process given the mnemonic).
  const signs = !config.sandbox && signsIn(role, process.env.KASSA_SIGNER_MNEMONIC_FILE?.trim() || undefined);
  const tasks: TaskSelection = config.sandbox ? 'all' : role === 'signer' ? 'payouts' : signs ? 'all' : 'without-payouts';

  let server: KassaServer | null = null;
  let worker: Runner | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Last resort if something hangs: never an orphaned half-stopped process.
    const timer = setTimeout(() => {
      log.error('shutdown did not finish within 30 s; exiting');
      process.exit(1);
    }, 30_000).unref();
    // Stop accepting and finish in-flight requests, then let running jobs end (bounded),
    // then close the pools, and only then stop the database they were connected to.
    await server?.stop().catch((error: unknown) => log.error({ err: error }, 'closing the HTTP server failed'));
    await Promise.all(deps.background.map((b) => b.stop().catch((error: unknown) => log.error({ err: error }, `stopping the ${b.name} failed`))));
    if (worker) {
      const stopped = worker.stop().then(() => true).catch((error: unknown) => (log.error({ err: error }, 'stopping the worker failed'), true));
      const inTime = await Promise.race([stopped, new Promise<false>((r) => setTimeout(() => r(false), JOBS_GRACE_MS).unref())]);
      if (!inTime) log.warn(`running jobs did not finish within ${JOBS_GRACE_MS / 1000} s; they will be retried`);
    }
    await database.close().catch((error: unknown) => log.error({ err: error }, 'closing the database pool failed'));
    await opened.stop().catch((error: unknown) => log.error({ err: error }, 'stopping the embedded database failed'));
    clearTimeout(timer);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  if (role !== 'web') {
    worker = await startWorker(deps, { tasks, crontab: role !== 'signer' });
    for (const b of deps.background) b.start();
  } else {
    for (const b of deps.background) if (b.web) b.start();
  }
  if (!config.sandbox && role !== 'web' && !signs && role !== 'signer') {
    log.warn('no signer in this process: withdrawals, refunds and sweeps wait for a process started with --role=signer (KASSA_SIGNER_MNEMONIC_FILE)');
  }
  if (role === 'signer') {
    await print(`\n  Kassa signer is running payouts for ${deps.networks.enabled.join(', ')}\n\n`);
    return;
  }
  if (role !== 'worker') {
    server = await createServer({ deps });
    const address = await server.start();
    log.info({ address, publicUrl: config.publicUrl, sandbox: config.sandbox, role }, 'Kassa is listening');
  }
  // Demo credentials exist only in a sandbox that is not a production deployment.
  if (config.sandbox && !config.production && role !== 'worker') {
    const demo = await createDemoBusinessIfEmpty(deps);
    if (demo) await print(demoBanner(demo, config.publicUrl));
  } else if (role !== 'worker') {
    const hint = await productionHint(deps);
    if (hint) await print(hint);
  }
  const database_ = opened.embedded ? `embedded PostgreSQL (${config.dataDir}/pg)` : redacted(opened.url);
  if (role === 'worker') {
    await print(`\n  Kassa worker is running jobs on ${database_}\n\n`);
  } else {
    const what = role === 'web' ? 'Kassa web' : 'Kassa';
    await print(`\n  ${what} is running at ${config.publicUrl}  (API reference: ${config.publicUrl}/docs; database: ${database_})\n\n`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof EmbeddedDatabaseError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Kassa failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
