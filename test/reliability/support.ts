/**
 * Shared by the reliability suites (issue 7): the fast/soak scale switch,
 * Kassa (or a worker) as a child process killed by process group, a
 * fingerprint of every table, and problem+json checks.
 *
 * `npm test` runs the fast versions; `npm run soak` re-runs the same files
 * with KASSA_SOAK=1, which selects the long versions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type postgres from 'postgres';
import { TEST_MASTER_KEY } from '../helpers/app.js';

/** What `npm start` runs. */
export const KASSA_BUNDLE = 'dist/server/main.js';

/** True when run by `npm run soak` (the long versions). */
export const SOAK = process.env.KASSA_SOAK === '1';

/** `fast` in `npm test`, `soak` under `npm run soak`; an explicit environment variable wins over both. */
export function scale(envName: string, fast: number, soak: number): number {
  const explicit = Number(process.env[envName]);
  if (Number.isFinite(explicit) && explicit > 0) return explicit;
  return SOAK ? soak : fast;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll until `probe` is truthy; fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs: number, what: string, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------
// Child processes

/**
 * The fields of `/proc/<pid>/stat` after the command name: [0] state, [1] ppid, [2] pgrp, …; null
 * once the process is gone. (The command name may hold spaces and parentheses: the fields start
 * after its last `)`.)
 */
export function procStat(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // raced with an exit
  }
}

/** Alive and not a zombie (a reparented zombie may never be reaped in a container). */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  const fields = procStat(pid);
  return fields !== null && fields[0] !== 'Z';
}

export type Kid = {
  proc: ChildProcess;
  /** Everything the child wrote (bounded), for error messages. */
  output: () => string;
  /** SIGKILL the whole process group (tsx runs the script in a node child of its own). */
  kill: () => void;
  /** Resolves when the process group leader has exited. */
  exited: Promise<void>;
};

/**
 * Spawn `command [args]` in its own process group with exactly `env` (plus
 * PATH and HOME). The caller must `kill()` it (afterAll / finally).
 */
export function spawnKid(command: string, args: string[], env: Record<string, string>): Kid {
  const proc = spawn(command, args, {
    cwd: resolve('.'),
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-8000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => {
    if (proc.exitCode !== null || proc.signalCode !== null) r();
    else proc.once('exit', () => r());
  });
  return {
    proc,
    output: () => tail,
    exited,
    kill: () => {
      if (!proc.pid) return;
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** Every pid in the process group of `pgid` (from /proc), for checking that a kill took them all. */
export function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(entry));
  }
  return pids;
}

/** The environment a Kassa child needs on a test database. */
export function kassaEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    KASSA_MASTER_KEY: TEST_MASTER_KEY,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    KASSA_SANDBOX: 'true',
    ...extra,
  };
}

/**
 * Kassa as `npm start` runs it, `node dist/server/main.js [--role=…]` (the
 * bundle `npm test` builds first), on `port`; resolves once /ready answers 200.
 */
export async function startKassaChild(
  databaseUrl: string,
  port: number,
  options: { role?: 'web' | 'worker' | 'all'; env?: Record<string, string>; readyTimeoutMs?: number } = {},
): Promise<Kid & { url: string }> {
  const url = `http://127.0.0.1:${port}`;
  if (!existsSync(resolve(KASSA_BUNDLE))) throw new Error(`${KASSA_BUNDLE} is missing: run npm run build (npm test does)`);
  const kid = spawnKid(process.execPath, [resolve(KASSA_BUNDLE), ...(options.role && options.role !== 'all' ? [`--role=${options.role}`] : [])], {
    ...kassaEnv(databaseUrl, { PORT: String(port), PUBLIC_URL: url }),
    ...options.env,
  });
  if (options.role === 'worker') return { ...kid, url };
  try {
    await waitFor(
      async () => {
        if (kid.proc.exitCode !== null) throw new Error(`Kassa exited during start: ${kid.output()}`);
        const res = await fetch(`${url}/ready`).catch(() => null);
        return res?.status === 200;
      },
      options.readyTimeoutMs ?? 60_000,
      `Kassa on port ${port} to be ready`,
      100,
    );
  } catch (error) {
    kid.kill();
    throw new Error(`${(error as Error).message}\n${kid.output()}`);
  }
  return { ...kid, url };
}

// ---------------------------------------------------------------------------
// The database, all of it

/**
 * One string per table (public schema and graphile-worker's jobs): its row
 * count and a digest of its contents. Equal fingerprints ⇒ no row was
 * inserted, updated or deleted in between.
 */
export async function fingerprint(sql: postgres.Sql): Promise<Record<string, string>> {
  const tables = await sql<{ schema: string; name: string }[]>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE'
      and (table_schema = 'public' or (table_schema = 'graphile_worker' and table_name in ('_private_jobs', '_private_job_queues')))
    order by 1, 2`;
  const parts = tables.map(
    (t) =>
      `select '${t.schema}.${t.name}' as t, count(*)::text || ':' || coalesce(md5(string_agg(md5(x::text), '' order by md5(x::text))), '') as f from "${t.schema}"."${t.name}" x`,
  );
  const rows = await sql.unsafe<{ t: string; f: string }[]>(parts.join(' union all '));
  return Object.fromEntries(rows.map((r) => [r.t, r.f]));
}

/** Names of the tables whose fingerprint differs. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((n) => before[n] !== after[n]).sort();
}

// ---------------------------------------------------------------------------
// Answers

export type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

/** Why `res` breaks "a 4xx is problem+json with the documented members", or null when it does not. */
export function problemViolation(res: Answer): string | null {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) return `content-type ${type}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    return 'body is not JSON';
  }
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'code,detail,errors,status,title,type') return `members ${keys}`;
  if (body.status !== res.statusCode) return `status member ${String(body.status)}`;
  if (typeof body.code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(body.code)) return `code ${String(body.code)}`;
  return null;
}

/** Stack frames, SQL or driver internals in an answer body. */
export function leaksInternals(body: string): boolean {
  return /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\bselect\b.+\bfrom\b|\binsert into\b|postgres(ql)?:\/\/|PostgresError/i.test(body);
}
