/**
 * Process wiring shared by `npm start` and the CLI: find or start the
 * database, make sure it is migrated, resolve the master key, build Deps.
 */
import postgres from 'postgres';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect, type Database } from '../db/client.js';
import { runningServer, startEmbedded } from '../db/embedded.js';
import { migrate } from '../db/migrate.js';
import { sandboxChains } from './adapters/chain/sandbox.js';
import { sandboxFaucet } from './adapters/chain/sandbox-faucet.js';
import { paymentCallbackSubscriber, withdrawalCallbackSubscriber } from './modules/callbacks/index.js';
import { liveCheckoutSubscriber } from './modules/payments/index.js';
import type { Config } from './platform/config.js';
import type { Deps } from './deps.js';
import { SandboxRates } from './adapters/rates/sandbox.js';
import { SandboxScreening } from './adapters/screening/sandbox.js';
import { createLiveRatesEngine, ratesConfigFromEnv } from './adapters/rates/config.js';
import { LiveRatesPort } from './adapters/rates/live-port.js';
import { createSanctionsScreening, screeningConfigFromEnv } from './adapters/screening/config.js';
import { importSdn, type ImportCounts } from './adapters/screening/ofac-import.js';
import { SanctionsScreeningPort } from './adapters/screening/live-port.js';
import type { Background, LiveStatus } from './deps.js';
import type { RatesPort } from './modules/money/index.js';
import type { ScreeningPort } from './modules/compliance/index.js';
import { CallbackSender } from './adapters/callbacks/http-transport.js';
import { RateLimits } from './platform/rate-limit.js';
import { decryptSecret, generateMasterKey, masterKeyCheck, parseMasterKey, type MasterKey } from './platform/secrets.js';
import { createLogger, type Log } from './platform/logger.js';
import { eq } from 'drizzle-orm';
import { businesses, installation } from '../db/schema.js';
import { ConfigError } from './platform/config.js';

export const DATABASE_NAME = 'kassa';

/** KASSA_MASTER_KEY, or in sandbox a key generated once into <dataDir>/master.key. */
export function resolveMasterKey(config: Config): MasterKey {
  if (config.masterKey) return parseMasterKey(config.masterKey);
  const file = join(config.dataDir, 'master.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${generateMasterKey()}\n`, { mode: 0o600 });
  }
  return parseMasterKey(readFileSync(file, 'utf8'));
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
}

export type OpenedDatabase = { url: string; stop: () => Promise<void>; embedded: boolean };

/**
 * DATABASE_URL when set; else the embedded server in <dataDir>/pg — reusing
 * one that is already running there (a CLI command next to `npm start`).
 */
export async function openDatabase(config: Config): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    await migrate(config.databaseUrl);
    return { url: config.databaseUrl, stop: async () => {}, embedded: false };
  }
  const dir = resolve(config.dataDir, 'pg');
  const running = runningServer(dir);
  const server = running ? { url: running, stop: async () => {} } : await startEmbedded(dir);
  await ensureDatabase(server.url(), DATABASE_NAME);
  const url = server.url(DATABASE_NAME);
  await migrate(url);
  return { url, stop: server.stop, embedded: true };
}

/**
 * What every Kassa process starts from: its master key, and its database
 * (opened, migrated, connected) with that key checked against it. On a
 * refused key nothing stays open.
 */
export async function openKassaDatabase(config: Config, options: { max: number }) {
  const masterKey = resolveMasterKey(config);
  const opened = await openDatabase(config);
  const database = connect(opened.url, options);
  try {
    await verifyMasterKey(database, masterKey);
  } catch (error) {
    await database.close().catch(() => {});
    await opened.stop().catch(() => {});
    throw error;
  }
  return { masterKey, opened, database };
}

/** The master key differs from the one the database was made with (a ConfigError: one line, exit 1). */
export class KeyMismatch extends ConfigError {
  override name = 'KeyMismatch';
}

/**
 * Refuse a master key other than the one this database was made with (its
 * secrets would not decrypt: every signed request would fail). The first
 * start records the key's check value; a database from before the check is
 * tested by decrypting one stored secret.
 */
export async function verifyMasterKey(database: Database, key: MasterKey): Promise<void> {
  const check = masterKeyCheck(key);
  const wrong = new KeyMismatch(
    'KASSA_MASTER_KEY is not the key this database was created with (its secrets cannot be decrypted); start with the original key.',
  );
  const [stored] = await database.db.select({ value: installation.value }).from(installation).where(eq(installation.name, 'master_key_check'));
  if (stored) {
    if (stored.value !== check) throw wrong;
    return;
  }
  const [sample] = await database.db.select({ sealed: businesses.callbackSecretEnc }).from(businesses).limit(1);
  if (sample) {
    try {
      decryptSecret(key, sample.sealed);
    } catch {
      throw wrong;
    }
  }
  await database.db.insert(installation).values({ name: 'master_key_check', value: check }).onConflictDoNothing();
  const [winner] = await database.db.select({ value: installation.value }).from(installation).where(eq(installation.name, 'master_key_check'));
  if (winner?.value !== check) throw wrong; // another process recorded a different key at the same moment
}

type MarketAdapters = { rates: RatesPort; screening: ScreeningPort; live: LiveStatus | null; background: Background[] };

/**
 * Rates and screening: the sandbox's fixed table and scripted scores, or (live)
 * market sources behind their quorum and sanctions lists (CONTRACT §11),
 * configured from `env`. A bad variable is a ConfigError naming it.
 */
export function marketAdapters(config: Config, database: Database, env: Record<string, string | undefined>, now: () => Date): MarketAdapters {
  if (config.sandbox) return { rates: new SandboxRates(), screening: new SandboxScreening(), live: null, background: [] };
  let engine, sanctions;
  try {
    engine = createLiveRatesEngine(database.sql, ratesConfigFromEnv(env), { now });
    sanctions = createSanctionsScreening(database.sql, screeningConfigFromEnv(env));
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  ${error instanceof Error ? error.message : String(error)}`);
  }
  const { rates, refresher } = engine;
  const { screening, ofac } = sanctions;
  return {
    rates: new LiveRatesPort(rates),
    screening: new SanctionsScreeningPort(screening),
    live: {
      rates: () => rates.status(),
      sanctions: async () => (!ofac || (await ofac.status()).imported ? 'ok' : 'missing'),
    },
    background: [
      {
        name: 'rates refresher',
        start: () => refresher.start(),
        stop: () => refresher.stop(),
        runOnce: async () => {
          const events = await refresher.refreshAll();
          rates.invalidate(); // this process reads the new quotes at once, not after its 2 s cache
          return events;
        },
      },
      ...(ofac && env.KASSA_OFAC_SDN_URL ? [sanctionsRefresh(database, env.KASSA_OFAC_SDN_URL, now)] : []),
    ],
  };
}

/** Import OFAC's SDN list (file or URL) into the database: `npm run kassa -- sanctions:import`. */
export function importSanctionsList(database: Database, source: string): Promise<ImportCounts> {
  return importSdn(database.sql, source);
}

const DAY_MS = 24 * 3600_000;

/**
 * KASSA_OFAC_SDN_URL: import the list when it is missing or a day old, checked
 * at start and hourly (an import replaces the list atomically, so two workers
 * doing it at once only do the work twice).
 */
function sanctionsRefresh(database: Database, url: string, now: () => Date): Background {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const check = () => {
    return (running = (async () => {
      const [row] = await database.sql<{ imported_at: Date }[]>`select imported_at from sanctions_lists where list = 'ofac'`;
      if (!row || now().getTime() - new Date(row.imported_at).getTime() >= DAY_MS) await importSdn(database.sql, url);
    })().catch(() => {
      // The list stays as it was (or missing: deposits wait in review); the next hour tries again.
    }));
  };
  return {
    name: 'sanctions list refresh',
    runOnce: () => check(),
    start: () => {
      check();
      timer = setInterval(check, 3600_000);
      timer.unref();
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

export function buildDeps(
  config: Config,
  database: Database,
  masterKey: MasterKey,
  now: () => Date = () => new Date(),
  log: Log = createLogger(config.logLevel),
  env: Record<string, string | undefined> = process.env,
): Deps {
  const market = marketAdapters(config, database, env, now);
  return {
    log,
    config,
    database,
    masterKey,
    // The adapters: the sandbox for chains; rates and screening by mode (marketAdapters).
    rates: market.rates,
    live: market.live,
    background: market.background,
    chains: sandboxChains(database, now),
    screening: market.screening,
    faucet: config.sandbox ? sandboxFaucet : null,
    callbacks: new CallbackSender({ timeoutMs: config.callbackTimeoutMs, allowPrivate: config.allowPrivateCallbackUrls }),
    // Subscribers of payment status changes and withdrawal outcomes, in the transaction of each.
    paymentSubscribers: [liveCheckoutSubscriber, paymentCallbackSubscriber(config.publicUrl)],
    withdrawalSubscribers: [withdrawalCallbackSubscriber],
    limits: new RateLimits(),
    now,
  };
}

export { connect };
