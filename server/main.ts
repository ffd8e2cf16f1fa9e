/**
 * Entry point of `npm start`: config → database → worker → http, and a
 * graceful shutdown on SIGTERM/SIGINT. `--role=web` or `--role=worker` runs
 * one half; the default runs both in one process.
 */
import { parseArgs } from 'node:util';
import type { Runner } from 'graphile-worker';
import { startWorker } from '../jobs/worker.js';
import { createServer, type KassaServer } from './edges/app.js';
import { createDemoBusinessIfEmpty, demoBanner } from './modules/businesses/index.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { buildDeps, connect, openDatabase, resolveMasterKey } from './compose.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
  const role = values.role;
  if (role !== 'all' && role !== 'web' && role !== 'worker') throw new ConfigError(`--role must be web, worker or all, not ${role}`);

  const config = loadConfig();
  const masterKey = resolveMasterKey(config);
  const opened = await openDatabase(config);
  const database = connect(opened.url, { max: 10 });
  const deps = buildDeps(config, database, masterKey);

  let server: KassaServer | null = null;
  let worker: Runner | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: shutting down\n`);
    const timer = setTimeout(() => process.exit(1), 15_000).unref();
    await server?.stop().catch(() => {});
    await worker?.stop().catch(() => {});
    await database.close().catch(() => {});
    await opened.stop().catch(() => {});
    clearTimeout(timer);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  if (role !== 'web') worker = await startWorker(deps);
  if (role !== 'worker') {
    server = await createServer({ deps });
    const address = await server.start();
    server.app.log.info({ address, publicUrl: config.publicUrl, sandbox: config.sandbox, role }, 'Kassa is listening');
  }
  const demo = await createDemoBusinessIfEmpty(deps);
  if (demo) process.stdout.write(demoBanner(demo, config.publicUrl));
  if (server) {
    process.stdout.write(`\n  Kassa is running at ${config.publicUrl}  (API reference: ${config.publicUrl}/docs)\n\n`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Kassa failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
