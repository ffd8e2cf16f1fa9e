/**
 * Migration 0007 moves the four `*_events` tables into the one `events`
 * table: every row is kept, typed by its entity, in the order the events
 * happened, and the old tables are gone. Runs the committed SQL files on a
 * database of its own: the migrations before 0007, rows as the old tables
 * held them, then 0007.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../db/migrate.js';

const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
const tags = journal.entries.map((e) => e.tag);
const eventsTag = tags.find((t) => t.endsWith('_events'))!;

async function apply(sql: postgres.Sql, tag: string): Promise<void> {
  for (const statement of readFileSync(join(MIGRATIONS_FOLDER, `${tag}.sql`), 'utf8').split('--> statement-breakpoint')) {
    if (statement.trim()) await sql.unsafe(statement);
  }
}

const name = `t_mig_${randomBytes(6).toString('hex')}`;
let admin: postgres.Sql;
let sql: postgres.Sql;

const payment = randomUUID();
const deposit = randomUUID();
const refund = randomUUID();
const withdrawal = randomUUID();
const t = (s: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, s));

beforeAll(async () => {
  const adminUrl = inject('adminUrl');
  admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  for (const tag of tags.slice(0, tags.indexOf(eventsTag))) await apply(sql, tag);
  // The event rows alone, without the payments, deposits, … they belong to:
  // `replica` skips the foreign-key triggers for this seeding only.
  await sql.begin(async (tx) => {
    await tx.unsafe(`set local session_replication_role = replica`);
    // Inserted out of time order on purpose: the copy must order by time, not by table.
    await tx`insert into withdrawal_events (withdrawal_id, from_status, to_status, reason, data, at) values
      (${withdrawal}, null, 'PENDING', 'requested', '{}', ${t(0)})`;
    await tx`insert into refund_events (refund_id, from_status, to_status, reason, at) values
      (${refund}, null, 'PENDING', 'excess', ${t(2)}), (${refund}, 'PENDING', 'CONFIRMED', 'broadcast', ${t(3)})`;
    await tx`insert into deposit_events (deposit_id, from_status, to_status, reason, data, at) values
      (${deposit}, null, 'UNCONFIRMED', 'seen', ${sql.json({ confirmations: 0 })}, ${t(1)}),
      (${deposit}, 'UNCONFIRMED', 'CONFIRMED', 'confirmed', ${sql.json({ confirmations: 6 })}, ${t(2)})`;
    await tx`insert into payment_events (payment_id, from_status, to_status, reason, data, at) values
      (${payment}, null, 'PENDING', 'created', '{}', ${t(0)}),
      (${payment}, 'PENDING', 'AWAITING', 'deposit seen', '{}', ${t(1)}),
      (${payment}, 'AWAITING', 'DEPOSITED', 'deposit confirmed', ${sql.json({ paid: '0.01' })}, ${t(2)})`;
  });
  await apply(sql, eventsTag);
});

afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists ${name} with (force)`);
  await admin?.end();
});

describe(`migration ${eventsTag}`, () => {
  it('copies every event row into events, typed by entity, in the order the events happened', async () => {
    const rows = await sql<{ entity_type: string; entity_id: string; from_status: string | null; to_status: string; reason: string; data: unknown; at: Date }[]>`
      select entity_type, entity_id, from_status, to_status, reason, data, at from events order by id`;
    expect(rows.map((r) => `${r.at.getUTCSeconds()} ${r.entity_type} ${r.from_status ?? '(new)'}→${r.to_status}`)).toEqual([
      '0 payment (new)→PENDING',
      '0 withdrawal (new)→PENDING',
      '1 payment PENDING→AWAITING',
      '1 deposit (new)→UNCONFIRMED',
      '2 payment AWAITING→DEPOSITED',
      '2 deposit UNCONFIRMED→CONFIRMED',
      '2 refund (new)→PENDING',
      '3 refund PENDING→CONFIRMED',
    ]);
    const ids = { payment, deposit, refund, withdrawal } as Record<string, string>;
    for (const r of rows) expect(r.entity_id).toBe(ids[r.entity_type]);
    expect(rows.find((r) => r.reason === 'confirmed')!.data).toEqual({ confirmations: 6 });
    expect(rows.find((r) => r.reason === 'deposit confirmed')!.data).toEqual({ paid: '0.01' });
    // refund_events had a data column that was never written: the copy has the default
    expect(rows.filter((r) => r.entity_type === 'refund').map((r) => r.data)).toEqual([{}, {}]);
  });

  it('drops the four old tables and keeps the new one append-only and typed', async () => {
    const old = await sql`select table_name from information_schema.tables where table_name in ('payment_events', 'deposit_events', 'refund_events', 'withdrawal_events')`;
    expect(old).toHaveLength(0);
    await expect(sql`delete from events`).rejects.toThrow(/append-only/);
    await expect(sql`update events set reason = 'x'`).rejects.toThrow(/append-only/);
    await expect(
      sql`insert into events (entity_type, entity_id, to_status, reason, at) values ('invoice', ${randomUUID()}, 'NEW', 'x', now())`,
    ).rejects.toThrow(/events_entity_type/);
  });
});
