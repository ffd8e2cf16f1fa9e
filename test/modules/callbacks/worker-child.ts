/**
 * A Kassa job worker in its own process, for the crash-safety test: it is
 * started with `node_modules/.bin/tsx test/modules/callbacks/worker-child.ts` and
 * configured entirely by its environment (DATABASE_URL, KASSA_MASTER_KEY,
 * KASSA_CALLBACK_*, …). Prints `ready <pid>` once the worker runs (tsx runs the
 * script in a child node process, so this pid is not the one `spawn` returns).
 */
import { connect } from '../../../db/client.js';
import { startWorker } from '../../../jobs/worker.js';
import { loadConfig } from '../../../server/platform/config.js';
import { buildDeps } from '../../../server/compose.js';
import { parseMasterKey } from '../../../server/platform/secrets.js';

const config = loadConfig({ ...process.env });
if (!config.databaseUrl || !config.masterKey) throw new Error('worker-child needs DATABASE_URL and KASSA_MASTER_KEY');
const database = connect(config.databaseUrl, { max: 4 });
const deps = buildDeps(config, database, parseMasterKey(config.masterKey));
const runner = await startWorker(deps, { crontab: false, pollInterval: 50 });
process.stdout.write(`ready ${process.pid}\n`);

process.on('SIGTERM', () => {
  void runner
    .stop()
    .then(() => database.close())
    .finally(() => process.exit(0));
});
await runner.promise;
