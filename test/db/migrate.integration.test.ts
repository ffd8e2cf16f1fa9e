/**
 * Processes started together on a fresh database migrate one after the other (db/migrate.ts): two
 * migrations at once on an empty database both succeed (the second found the work done), where
 * the second died on `CREATE SEQUENCE … already exists`.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, expect, inject, it } from 'vitest';
import { migrate } from '../../db/migrate.js';

const adminUrl = inject('adminUrl');
const name = `m_${randomBytes(6).toString('hex')}`;
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });

afterAll(async () => {
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

it('two processes migrating one empty database at once both start: each migration applied once', async () => {
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const results = await Promise.allSettled([migrate(url.toString()), migrate(url.toString())]);
  expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual(['fulfilled', 'fulfilled']);
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    const [applied] = await db<{ n: number; distinct: number }[]>`
      select count(*)::int as n, count(distinct hash)::int as distinct from drizzle.__drizzle_migrations`;
    expect(applied!.n).toBeGreaterThanOrEqual(18);
    expect(applied!.distinct).toBe(applied!.n);
    const [jobs] = await db<{ ok: boolean }[]>`select to_regproc('graphile_worker.add_job') is not null as ok`;
    expect(jobs!.ok).toBe(true);
  } finally {
    await db.end();
  }
}, 120_000);
