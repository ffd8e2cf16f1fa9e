/**
 * Process wiring shared by `npm start` and the CLI: find or start the
 * database, make sure it is migrated, resolve the master key, build Deps.
 */
import postgres from 'postgres';
import { createHash } from 'node:crypto';
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
import { NETWORKS, type RatesPort } from './modules/money/index.js';
import type { ScreeningPort } from './modules/compliance/index.js';
import { CallbackSender } from './adapters/callbacks/http-transport.js';
import { RateLimits } from './platform/rate-limit.js';
import { decryptSecret, generateMasterKey, masterKeyCheck, parseMasterKey, type MasterKey } from './platform/secrets.js';
import { createLogger, type Log } from './platform/logger.js';
import { eq } from 'drizzle-orm';
import { businesses, installation } from '../db/schema.js';
import { ConfigError } from './platform/config.js';
import { SHARED_ADDRESS_SEQUENCE, sandboxNetworkAccess, type NetworkAccess } from './modules/networks/index.js';
import { ingestDeposit, queueSweep, recordReplacedPayout, recordSettledPayout, unsettledPayouts } from './modules/deposits/index.js';
import type { DepositReport } from './modules/networks/ports.js';
import { readLiveChainConfig, LiveChainConfigError } from './adapters/chain/live/live-config.js';
import { openLiveChains, type LiveChains, type ProcessRole } from './adapters/chain/live/live-chains.js';

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

export type OpenedDatabase = {
  url: string;
  stop: () => Promise<void>;
  embedded: boolean;
  /** The postmaster pid of an embedded PostgreSQL a killed Kassa left running, which this process took over. */
  adopted?: number;
};

/**
 * DATABASE_URL when set; else the embedded server in <dataDir>/pg — reusing
 * one that is already running there (a CLI command next to `npm start`).
 */
export async function openDatabase(config: Config, options: { adoptOrphan?: boolean } = {}): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    await migrate(config.databaseUrl);
    return { url: config.databaseUrl, stop: async () => {}, embedded: false };
  }
  const dir = resolve(config.dataDir, 'pg');
  // One already running there: a CLI command beside `npm start`, or an orphan of a Kassa killed without
  // stopping it, which a server process (never a short CLI command) adopts and stops at its own end.
  const running = runningServer(dir, { adoptOrphan: options.adoptOrphan ?? false });
  const server = running ?? (await startEmbedded(dir));
  await ensureDatabase(server.url(), DATABASE_NAME);
  const url = server.url(DATABASE_NAME);
  await migrate(url);
  return { url, stop: server.stop, embedded: true, ...(running?.adopted ? { adopted: running.adopted } : {}) };
}

/**
 * What every Kassa process starts from: its master key, and its database
 * (opened, migrated, connected) with that key checked against it. On a
 * refused key nothing stays open.
 */
export async function openKassaDatabase(config: Config, options: { max: number; adoptOrphan?: boolean; server?: boolean }) {
  const masterKey = resolveMasterKey(config);
  const opened = await openDatabase(config, { adoptOrphan: options.adoptOrphan });
  const database = connect(opened.url, options);
  try {
    await verifyMasterKey(database, masterKey);
    await verifyInstallation(database, config.sandbox, process.env, { record: options.server ?? false });
    if (options.server) await recordPublicUrl(database, config.publicUrl);
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

/**
 * What a database was set up with and every process on it must share: sandbox or live, and each live
 * network's xpub (its deposit addresses and the scanner's watch list derive from it: a process with
 * another would hand out addresses nobody watches). A server process records them at its first start
 * (first writer wins); a later one, or a CLI command, that differs is refused in one line. A CLI
 * command records nothing: run before the first server start of an older database, it would otherwise
 * decide the mode for the server.
 */
export async function verifyInstallation(
  database: Database,
  sandbox: boolean,
  env: Record<string, string | undefined>,
  options: { record: boolean },
): Promise<void> {
  const mode = sandbox ? 'sandbox' : 'live';
  await sameAsRecorded(database, 'mode', mode, options.record, () =>
    sandbox
      ? 'This database is a live one and this process runs in sandbox: set KASSA_SANDBOX=false (or NODE_ENV=production), as the server has. In sandbox it would price with the fixed table and hand out sandbox addresses on real payments.'
      : 'This database was made in sandbox (its payments and deposits are simulated): live mode needs a database of its own, another KASSA_DATA_DIR or DATABASE_URL.',
  );
  if (sandbox) return;
  for (const network of NETWORKS) {
    const xpub = env[`KASSA_${network}_XPUB`]?.trim();
    if (!xpub) continue;
    await sameAsRecorded(database, `xpub:${network}`, fingerprint(xpub), options.record, () =>
      `KASSA_${network}_XPUB is not the key this database's ${network} deposit addresses were derived from: deposits to them would go unseen. Start with the original xpub.`,
    );
  }
}

/**
 * The PUBLIC_URL the last server started with: a CLI command that changes a payment (choosing its
 * currency, a compliance decision) sends its callback with the payment's `url`, which must be the
 * server's, not the CLI's default of localhost:3000.
 */
async function recordPublicUrl(database: Database, url: string): Promise<void> {
  await database.db.insert(installation).values({ name: 'public_url', value: url }).onConflictDoUpdate({ target: installation.name, set: { value: url } });
}

/** The PUBLIC_URL the server runs with, for a CLI command not given one; null before any server start. */
export async function serverPublicUrl(database: Database): Promise<string | null> {
  const [row] = await database.db.select({ value: installation.value }).from(installation).where(eq(installation.name, 'public_url'));
  return row?.value ?? null;
}

const fingerprint = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

async function sameAsRecorded(database: Database, name: string, value: string, record: boolean, refusal: () => string): Promise<void> {
  if (record) await database.db.insert(installation).values({ name, value }).onConflictDoNothing();
  const [stored] = await database.db.select({ value: installation.value }).from(installation).where(eq(installation.name, name));
  if (stored && stored.value !== value) throw new KeyMismatch(refusal());
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

/** Live mode before its chains are opened (or with none): nothing is offered. */
const NO_NETWORKS: NetworkAccess = {
  mode: 'live',
  enabled: [],
  offers: () => false,
  addressSequence: () => SHARED_ADDRESS_SEQUENCE,
  depositAddress: (network) => {
    throw new Error(`Network ${network} is not enabled`);
  },
  validateAddress: (network) => ({ valid: false, reason: `${network} is not enabled on this installation` }),
  paymentUri: () => null,
};

export function buildDeps(
  config: Config,
  database: Database,
  masterKey: MasterKey,
  now: () => Date = () => new Date(),
  log: Log = createLogger(config.logLevel),
  env: Record<string, string | undefined> = process.env,
  live: LiveChains | null = null,
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
    background: [...market.background, ...(live?.background ?? [])],
    // The chains: the sandbox's simulated ones, or (live) the configured nodes only.
    chains: config.sandbox ? sandboxChains(database, now) : (live?.chains ?? {}),
    networks: config.sandbox ? sandboxNetworkAccess(masterKey) : (live?.access ?? NO_NETWORKS),
    chainHealth: live ? () => live.health() : null,
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

/**
 * Live mode (CONTRACT §10): open the configured networks for this process's
 * role, then build Deps around them. Scanners report to the deposit
 * ingestion; a confirmed deposit on a treasury network (EVM) queues its
 * sweep. A missing or bad variable, or a node that does not answer at
 * start, is a ConfigError naming it.
 */
export async function buildLiveDeps(
  config: Config,
  database: Database,
  masterKey: MasterKey,
  role: ProcessRole,
  options: { now?: () => Date; log?: Log; env?: Record<string, string | undefined>; startAttempts?: number } = {},
): Promise<Deps> {
  const env = options.env ?? process.env;
  const log = options.log ?? createLogger(config.logLevel);
  let deps: Deps | null = null;
  const sink = async (report: DepositReport) => {
    if (!deps) throw new Error('deposit reported before Kassa finished starting'); // the engine redelivers it
    await ingestDeposit(deps, report);
    if (deps.chains[report.network]?.sweep) await queueSweep(deps, report);
  };
  let live: LiveChains;
  try {
    live = await openLiveChains(readLiveChainConfig(env), {
      sql: database.sql,
      sink,
      role,
      startAttempts: options.startAttempts,
      onError: (network, error) => log.warn({ err: error, network }, `${network}: chain work failed; retrying`),
      onUnreachable: (network, message) =>
        log.error({ network }, `${message.replace(/\.+$/, '')}. Starting without ${network} (payments and withdrawals on it: 503 NETWORK_UNAVAILABLE, /ready 503); trying it again every 10 s`),
      onConnected: (network) => log.info({ network }, `${network}: its node answered; ${network} is open now`),
      onReplaced: async (network, { id, txHash }) => {
        const outcome = await recordReplacedPayout(database.db, id, txHash, (options.now ?? (() => new Date()))());
        if (outcome === 'RECORDED') log.info({ network, id, txHash }, `${network}: ${id} now shows ${txHash} (its transaction was replaced at a higher fee)`);
      },
      unsettledPayouts: (network) => unsettledPayouts(database.db, network),
      onSettled: async (network, id, settled) => {
        if (!deps) throw new Error('payout settled before Kassa finished starting'); // the next pass brings it again
        const outcome = await recordSettledPayout(deps, id, settled);
        const { txHash } = settled;
        if (outcome === 'FAILED' || outcome === 'NON_REFUNDABLE') {
          log.warn({ network, id, txHash }, `${network}: ${id} failed on chain (${txHash}): recorded ${outcome}`);
        } else if (outcome !== 'UNCHANGED') {
          log.info({ network, id, txHash }, `${network}: ${id} confirmed on chain: ${outcome}`);
        }
      },
    });
  } catch (error) {
    if (error instanceof LiveChainConfigError) throw new ConfigError(`Invalid configuration:\n  ${error.message}`);
    throw error;
  }
  deps = buildDeps(config, database, masterKey, options.now, log, env, live);
  // The signer runs payouts only: the rates refresher and sanctions refresh belong to workers.
  if (role === 'signer') deps.background = live.background;
  return deps;
}
