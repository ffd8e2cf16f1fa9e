/**
 * The operator CLI (CONTRACT §9): `npm run kassa -- <command> [options] [--json]`.
 * The commands are a table (server/edges/cli/*-commands.ts); this entry point
 * parses one command's options strictly, opens the database, runs it and
 * prints: with --json exactly one JSON value on stdout and nothing else,
 * text for people otherwise. Failures: one message on stderr, exit 2 for a
 * wrong invocation (with the usage), 1 for anything else.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './platform/config.js';
import { KeyMismatch, buildDeps, importSanctionsList, openKassaDatabase, serverPublicUrl } from './compose.js';
import type { Deps } from './deps.js';
import { KassaError } from './platform/errors.js';
import { unixTimes } from './edges/unix-times.rules.js';
import { command, UsageError, type Command, type Values } from './edges/cli/command.js';
import { businessCommands } from './edges/cli/business-commands.js';
import { keyCommands } from './edges/cli/key-commands.js';
import { decisionCommands } from './edges/cli/decision-commands.js';
import { deliveryCommands } from './edges/cli/delivery-commands.js';
import { balanceCommands } from './edges/cli/balance-commands.js';
import { sandboxCommands } from './edges/cli/sandbox-commands.js';

/** The two commands that need the composition root itself. */
const rootCommands = [
  command('sanctions:import <file|url>', "load the digital-currency addresses of OFAC's SDN list (sdn_advanced.xml) for screening; replaces the previous list", async (ctx, _values, positionals) => {
    const source = positionals[0];
    if (!source || positionals.length > 1) throw new UsageError('sanctions:import needs a file path or an http(s) URL of sdn_advanced.xml (one).');
    const counts = await importSanctionsList(ctx.deps().database, source);
    const perNetwork = Object.entries(counts.perNetwork).map(([n, c]) => `${n} ${c}`).join(', ');
    return { json: { ...counts }, human: `Imported ${counts.addresses} sanctioned addresses from ${source}: ${perNetwork || 'none on supported networks'}` };
  }, { positionals: true }),
  command('migrate', 'apply the database migrations (every command does so first)', async () => ({ json: { migrated: true }, human: 'Database migrated.' })),
];

const COMMANDS: Command[] = [...businessCommands, ...keyCommands, ...decisionCommands, ...deliveryCommands, ...balanceCommands, ...sandboxCommands, ...rootCommands];
const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

const USAGE = `Usage: npm run kassa -- <command> [options] [--json]

${COMMANDS.map((c) => `  ${c.name}${c.usage ? ` ${c.usage}` : ''}\n      ${c.summary}`).join('\n')}
`;

async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help') {
    process.stdout.write(USAGE);
    return;
  }
  const cmd = BY_NAME.get(name);
  if (!cmd) throw new UsageError(`Unknown command ${name}.`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: cmd.positionals ?? false,
    options: { ...cmd.options, json: { type: 'boolean', default: false } },
    strict: true,
  });

  const loaded = loadConfig();
  // A CLI pointed at another data directory than the server's would make a second, empty database in
  // silence: say so when this command is the one that creates it.
  const pgDir = resolve(loaded.dataDir, 'pg');
  const creates = !loaded.databaseUrl && !existsSync(join(pgDir, 'PG_VERSION'));
  const { masterKey, opened, database } = await openKassaDatabase(loaded, { max: 2 });
  // Callbacks sent for this command's changes carry the payment's url: the server's, unless given.
  const config = process.env.PUBLIC_URL ? loaded : { ...loaded, publicUrl: (await serverPublicUrl(database)) ?? loaded.publicUrl };
  if (creates) {
    process.stderr.write(
      `Kassa: no database was in ${pgDir}; this command created a new, empty one. If your server runs with another KASSA_DATA_DIR or DATABASE_URL, give the CLI the same.\n`,
    );
  }
  let deps: Deps | undefined;
  try {
    const output = await cmd.run(
      { db: database.db, masterKey, deps: () => (deps ??= buildDeps(config, database, masterKey)), now: () => new Date() },
      values as Values,
      positionals,
    );
    // Times as the REST and tRPC APIs write them: integer UNIX seconds (the human text shows ISO).
    process.stdout.write((values as Values).json ? `${JSON.stringify(unixTimes(output.json))}\n` : `${output.human}\n`);
  } finally {
    await database.close();
    await opened.stop();
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof KeyMismatch) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    if (error instanceof UsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    // A refused change (not found, wrong state) names its code: scripts can tell them apart.
    const message = error instanceof KassaError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);
