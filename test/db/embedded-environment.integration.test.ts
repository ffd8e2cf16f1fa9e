/**
 * The embedded PostgreSQL runs with glibc's malloc told to keep its heap (db/embedded.ts,
 * POSTGRES_MALLOC_TUNABLES): without it a batched create's backend gave its heap back to the kernel
 * about every second statement, and each give-back flushed the TLB of both vCPUs. An operator's own
 * GLIBC_TUNABLES wins, an empty one included (glibc's defaults).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { POSTGRES_MALLOC_TUNABLES, postgresEnvironment, startEmbedded } from '../../db/embedded.js';

describe('postgresEnvironment', () => {
  it('adds the malloc settings and the C locale to the environment it is given', () => {
    const env = postgresEnvironment({ PATH: '/usr/bin', LC_ALL: 'de_DE.UTF-8' });
    expect(env).toEqual({ PATH: '/usr/bin', LC_ALL: 'C', GLIBC_TUNABLES: POSTGRES_MALLOC_TUNABLES });
    expect(POSTGRES_MALLOC_TUNABLES).toBe('glibc.malloc.trim_threshold=16777216:glibc.malloc.top_pad=1048576:glibc.malloc.mmap_threshold=4194304');
  });

  it("keeps the operator's GLIBC_TUNABLES, an empty one too", () => {
    expect(postgresEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=2');
    expect(postgresEnvironment({ GLIBC_TUNABLES: '' }).GLIBC_TUNABLES).toBe('');
  });
});

describe('the embedded server', () => {
  it.runIf(process.platform === 'linux')('runs its postmaster with the malloc settings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kassa-pg-env-'));
    // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the directory.
    chmodSync(dir, 0o755);
    const server = await startEmbedded(join(dir, 'data'), { persistent: false });
    try {
      const sql = postgres(server.url(), { max: 1, onnotice: () => {} });
      const [row] = await sql<{ pid: string }[]>`select split_part(pg_read_file('postmaster.pid'), E'\n', 1) as pid`;
      await sql.end();
      // glibc may split the variable at its colons in place while parsing it: join the entries again.
      const environ = readFileSync(`/proc/${row!.pid}/environ`, 'latin1').split('\0').join(':');
      expect(environ).toContain(`GLIBC_TUNABLES=${POSTGRES_MALLOC_TUNABLES}`);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
