/**
 * What the scenarios run against: a fresh database (embedded PostgreSQL in a
 * temporary directory, or a new database on the server of DATABASE_URL),
 * Kassa as a child process (so its RSS is its own and the load generator
 * does not share its event loop), and the helper processes (a bare Fastify,
 * a callback receiver). Everything started here is stopped by `Cleanup`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { freePort, startEmbedded } from '../db/embedded.js';
import { migrate } from '../db/migrate.js';
import { sleep } from './stats.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Ctrl-C or a TERM: stops every process and database the run's Cleanup (`active()`, once there is
 * one) started, then `after()`, and exits 130. A second signal exits at once.
 */
export function stopOnSignals(active: () => Cleanup | null, what: string, after: () => void = () => {}): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      process.stderr.write(`${signal}: stopping what ${what} started (again to force)\n`);
      void (active()?.runAll() ?? Promise.resolve()).finally(() => {
        after();
        process.exit(130);
      });
    });
  }
}

/** Stops, in reverse order, everything registered; each step at most once, errors ignored. */
export class Cleanup {
  private readonly steps: { what: string; run: () => Promise<void> }[] = [];
  add(what: string, run: () => Promise<void>): () => Promise<void> {
    let done = false;
    const step = { what, run: async () => {
      if (done) return;
      done = true;
      await run();
    } };
    this.steps.push(step);
    return step.run;
  }
  async runAll(log: (message: string) => void = () => {}): Promise<void> {
    while (this.steps.length) {
      const step = this.steps.pop()!;
      try {
        await step.run();
      } catch (error) {
        log(`cleanup of ${step.what} failed: ${(error as Error).message}`);
      }
    }
  }
}

export type BenchDatabase = { url: string; postgresVersion: string | null; note: string | null };

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * `databaseUrl`: used as it is (the caller owns it, already migrated or not).
 * `adminUrl`: a new database `kassa_bench_<random>` is created on that server
 * and dropped at the end. Neither: an embedded server in a temporary directory.
 */
export async function openBenchDatabase(
  cleanup: Cleanup,
  source: { databaseUrl?: string; adminUrl?: string },
): Promise<BenchDatabase> {
  let url: string;
  let note: string | null = null;
  if (source.databaseUrl) {
    url = source.databaseUrl;
  } else {
    let adminUrl = source.adminUrl;
    if (!adminUrl) {
      const dir = mkdtempSync(join(tmpdir(), 'kassa-bench-pg-'));
      // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the directory.
      chmodSync(dir, 0o755);
      cleanup.add('temporary directory', async () => rmSync(dir, { recursive: true, force: true }));
      const server = await startEmbedded(join(dir, 'data'), { persistent: false });
      cleanup.add('embedded PostgreSQL', () => server.stop());
      adminUrl = server.url('postgres');
      note = 'embedded PostgreSQL in a fresh temporary data directory (fsync on)';
    }
    const name = `kassa_bench_${randomBytes(4).toString('hex')}`;
    try {
      url = await createDatabase(adminUrl, name);
      const admin = adminUrl;
      cleanup.add(`database ${name}`, () => dropDatabase(admin, name));
      note ??= `a fresh database ${name} on the server of DATABASE_URL, dropped afterwards`;
    } catch (error) {
      url = adminUrl;
      note = `could not create a database (${(error as Error).message}); used DATABASE_URL as it is`;
    }
  }
  await migrate(url);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let postgresVersion: string | null = null;
  try {
    const [row] = await sql<{ server_version: string }[]>`show server_version`;
    postgresVersion = row?.server_version ?? null;
  } finally {
    await sql.end();
  }
  return { url, postgresVersion, note };
}

export type Child = {
  process: ChildProcess;
  pid: number;
  /** The last lines the process wrote, for error messages. */
  output: () => string;
  /** SIGTERM, then SIGKILL after 10 s; resolves when it exited. */
  stop: () => Promise<void>;
};

/** How much of a child's output is kept for error messages. */
const TAIL = 4000;

/** The last `bytes` of a file, for error messages. */
function fileTail(path: string, bytes = TAIL): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, bytes));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString();
  } finally {
    closeSync(fd);
  }
}

/**
 * Spawn a child process whose output is kept (bounded) and which `cleanup` stops. With `logFile`,
 * the child writes its stdout and stderr into that file itself, as a service writes its log, so no
 * process of the bench spends CPU reading it.
 */
export function spawnChild(cleanup: Cleanup, what: string, command: string, args: string[], env: Record<string, string>, logFile?: string): Child {
  const fd = logFile ? openSync(logFile, 'a') : null;
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd ?? 'pipe', fd ?? 'pipe'] });
  if (fd !== null) closeSync(fd); // the child holds its own copy
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = cleanup.add(what, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return {
    process: child,
    pid: child.pid!,
    output: () => (logFile ? fileTail(logFile) : tail),
    stop,
  };
}

/** The first line of stdout parsed as JSON (helper processes print `{"port": …}` when listening). */
function firstJsonLine<T>(child: Child, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no answer from child process: ${child.output()}`)), timeoutMs);
    child.process.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buffer.slice(0, newline)) as T);
      } catch (error) {
        reject(error as Error);
      }
    });
    child.process.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child process exited (${code}): ${child.output()}`));
    });
  });
}

export type KassaProcess = Child & { url: string; port: number };

export const KASSA_BUNDLE = 'dist/server/main.js';

/**
 * What `npm start` runs, `node dist/server/main.js` (the bundle `npm run
 * build` makes; `npm run bench` builds it first). Waits for /ready.
 */
export async function startKassa(
  cleanup: Cleanup,
  databaseUrl: string,
  env: Record<string, string>,
  options: { nodeArgs?: string[]; role?: 'all' | 'web' | 'worker'; logFile?: string; root?: string } = {},
): Promise<KassaProcess> {
  // `root`: another checkout's build (bench/ab.ts compares two), this one's by default.
  const bundle = join(options.root ?? ROOT, KASSA_BUNDLE);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build${options.root ? ` in ${options.root}` : ''}`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnChild(
    cleanup,
    'Kassa server',
    process.execPath,
    [...(options.nodeArgs ?? []), bundle, ...(options.role ? [`--role=${options.role}`] : [])],
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      LOG_LEVEL: 'silent',
      KASSA_SANDBOX: 'true',
      NODE_ENV: '',
      ...env,
    },
    options.logFile,
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`Kassa exited during start: ${child.output()}`);
    try {
      const res = await fetch(`${url}/ready`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Kassa did not become ready: ${child.output()}`);
    await sleep(100);
  }
  return { ...child, url, port };
}

const FASTIFY_CONSTANT = `
import Fastify from 'fastify';
import postgres from 'postgres';
const app = Fastify({ logger: false, bodyLimit: 65536 });
const constant = { ok: true };
app.post('/v1/payments', async () => constant);
app.get('/v1/payments/:id', async () => constant);
// The HTTP floor: the same route doing nothing but the limit's own statement, over the same pool size.
const sql = postgres(process.env.DATABASE_URL, { max: Number(process.env.POOL_SIZE), onnotice: () => {} });
app.post('/floor/v1/payments', async (req) => {
  await sql\`insert into bench_raw_insert (client_id, amount) values (\${req.body.clientPaymentId}, \${req.body.displayAmount})\`;
  return constant;
});
app.get('/floor/v1/payments/:id', async (req) => (await sql\`select * from payments where id = \${req.params.id}\`)[0]);
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(JSON.stringify({ port: app.server.address().port }) + '\\n');
process.on('SIGTERM', () => app.close().then(() => sql.end({ timeout: 5 })).then(() => process.exit(0)));
`;

/**
 * A bare Fastify 5 (Kassa's version): answering a constant (the framework's ceiling on this machine),
 * and at /floor/… doing only the raw limit's own INSERT or SELECT through postgres.js (the floor any
 * HTTP service pays on top of that statement here: a request parsed, a round trip, an answer written).
 */
export async function startFastifyConstant(cleanup: Cleanup, databaseUrl: string, poolSize: number): Promise<Child & { url: string }> {
  const child = spawnChild(cleanup, 'bare Fastify', process.execPath, ['--input-type=module', '-e', FASTIFY_CONSTANT], {
    DATABASE_URL: databaseUrl,
    POOL_SIZE: String(poolSize),
  });
  const { port } = await firstJsonLine<{ port: number }>(child, 30_000);
  return { ...child, url: `http://127.0.0.1:${port}` };
}

const RECEIVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const fail = req.url.startsWith('/flaky') && Math.random() < 0.5;
    res.writeHead(fail ? 500 : 200, { 'content-type': 'text/plain' });
    res.end(fail ? 'failing on purpose' : 'ok');
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** A callback receiver (node:http) in its own process: `/ok` answers 200, `/flaky` 500 half of the time at random. */
export async function startReceiver(cleanup: Cleanup): Promise<Child & { url: string }> {
  const child = spawnChild(cleanup, 'callback receiver', process.execPath, ['--input-type=module', '-e', RECEIVER], {});
  const { port } = await firstJsonLine<{ port: number }>(child, 30_000);
  return { ...child, url: `http://127.0.0.1:${port}` };
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (Linux); null elsewhere. */
export function rssMiB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; max and all samples. */
export class RssSampler {
  private timer: NodeJS.Timeout | null = null;
  readonly samples: number[] = [];
  constructor(private readonly pid: number, private readonly everyMs = 100) {}
  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    return this;
  }
  sample(): number | null {
    const value = rssMiB(this.pid);
    if (value !== null) this.samples.push(value);
    return value;
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
  get max(): number | null {
    return this.samples.length ? Math.max(...this.samples) : null;
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (USER_HZ = 100); null elsewhere. */
export function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Starts counting a process's CPU; the function returned gives the ms per operation since (null when it cannot be read). */
export function processCpuMeter(pid: number): (operations: number) => number | null {
  const before = cpuMs(pid);
  return (operations) => {
    const after = cpuMs(pid);
    return before !== null && after !== null && operations ? (after - before) / operations : null;
  };
}

/**
 * CPU time (user + system) the PostgreSQL server listening on `port` has used so far, in ms: the
 * postmaster with its reaped children (cutime, cstime) plus every backend alive now, from /proc
 * (Linux); null elsewhere or when no such server runs on this machine (a remote DATABASE_URL).
 */
export function postgresCpuMs(port: number): number | null {
  try {
    const procs = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
    const stat = (pid: string) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    let postmaster: string | undefined;
    for (const pid of procs) {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const p = args.indexOf('-p');
        if (/postgres$/.test(args[0] ?? '') && p >= 0 && args[p + 1] === String(port)) postmaster = pid;
      } catch {
        // gone
      }
    }
    if (!postmaster) return null;
    const own = stat(postmaster);
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    for (const pid of procs) {
      try {
        const f = stat(pid);
        if (f[1] === postmaster) ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // exited between the listing and the read: its time is in the postmaster's cutime now
      }
    }
    return ticks * 10;
  } catch {
    return null;
  }
}

/** Starts counting the database server's CPU; the function returned gives the ms per operation since. */
export function postgresCpuMeter(databaseUrl: string): (operations: number) => number | null {
  const port = Number(new URL(databaseUrl).port || 5432);
  const before = postgresCpuMs(port);
  return (operations) => {
    const after = postgresCpuMs(port);
    return before !== null && after !== null && operations ? (after - before) / operations : null;
  };
}
