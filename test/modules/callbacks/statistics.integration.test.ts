/**
 * A burst of callback deliveries after a quiet time leaves the table's
 * statistics describing the quiet time until autovacuum looks (once a minute);
 * the claim's plan then scans and sorts every due row. The dispatcher looks
 * every few seconds and analyzes the table itself after STALE_STATISTICS_ROWS
 * changes.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  refreshStaleStatistics, STALE_STATISTICS_ROWS, startCallbackDispatcher, type CallbackDispatcher,
} from '../../../server/modules/callbacks/index.js';
import { connect } from '../../../db/client.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/worker.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** How many times callback_deliveries was analyzed by hand (not by autovacuum). */
async function analyzeCount(): Promise<number> {
  const [row] = (await t.db.db.execute(sql`select analyze_count::int as n from pg_stat_user_tables where relid = 'callback_deliveries'::regclass`)) as unknown as [{ n: number }];
  return row.n;
}

/**
 * `count` delivered rows (nothing for a dispatcher to send), their change counts flushed to the
 * statistics at once instead of at the inserting backend's next report (up to ten seconds).
 */
async function insertDelivered(count: number): Promise<void> {
  const reserved = await t.db.sql.reserve();
  try {
    await reserved`
      insert into callback_deliveries (business_id, kind, subject_id, webhook_id, url, body, status, attempts, first_attempt_at, delivered_at)
      select ${t.business.businessId}::uuid, 'WITHDRAWAL', gen_random_uuid(), 'msg_' || gen_random_uuid(), 'http://example.test/cb', '{}', 'DELIVERED', 1, now(), now()
      from generate_series(1, ${count}::int)`;
    await reserved`select pg_stat_force_next_flush()`;
  } finally {
    reserved.release();
  }
}

/** Until the statistics show at least `rows` changes since the last analyze (their flush is asynchronous). */
const changedSinceAnalyze = (rows: number) =>
  eventually(async () => (await t.db.db.execute(sql`select 1 from pg_stat_user_tables where relid = 'callback_deliveries'::regclass and n_mod_since_analyze >= ${rows}`)).length > 0);

describe('statistics of callback_deliveries after a burst', () => {
  it(`are left to autovacuum below ${STALE_STATISTICS_ROWS} changed rows, and analyzed at once above`, async () => {
    await t.db.db.execute(sql`analyze callback_deliveries`);
    const before = await analyzeCount();

    await insertDelivered(STALE_STATISTICS_ROWS - 100);
    await changedSinceAnalyze(1);
    expect(await refreshStaleStatistics(t.deps)).toBe(false);
    expect(await analyzeCount()).toBe(before);

    await insertDelivered(200);
    await changedSinceAnalyze(STALE_STATISTICS_ROWS);
    expect(await refreshStaleStatistics(t.deps)).toBe(true);
    expect(await analyzeCount()).toBe(before + 1);
    // Fresh now: the next look does nothing.
    expect(await refreshStaleStatistics(t.deps)).toBe(false);
    expect(await analyzeCount()).toBe(before + 1);
  });

  it('a running dispatcher analyzes the table after a burst, without being asked', async () => {
    let dispatcher: CallbackDispatcher | null = null;
    try {
      dispatcher = await startCallbackDispatcher(t.deps, { concurrency: 2, statisticsEveryMs: 100 });
      const before = await analyzeCount();
      await insertDelivered(STALE_STATISTICS_ROWS + 100);
      await eventually(async () => (await analyzeCount()) > before, 10_000, 'the dispatcher to analyze callback_deliveries');
    } finally {
      await dispatcher?.stop();
    }
  });

  it('a database user that does not own the table leaves it to autovacuum', async () => {
    await insertDelivered(STALE_STATISTICS_ROWS + 100);
    await changedSinceAnalyze(STALE_STATISTICS_ROWS);
    const role = `kassa_reader_${Date.now()}`;
    await t.db.sql.unsafe(`create role ${role} login password 'reader'`);
    await t.db.sql.unsafe(`grant select on all tables in schema public to ${role}`);
    const url = new URL(t.db.url);
    url.username = role;
    url.password = 'reader';
    const reader = connect(url.toString(), { max: 1 });
    try {
      const before = await analyzeCount();
      expect(await refreshStaleStatistics({ ...t.deps, database: reader })).toBe(false);
      expect(await analyzeCount()).toBe(before);
      // The owner does it.
      expect(await refreshStaleStatistics(t.deps)).toBe(true);
    } finally {
      await reader.close();
      await t.db.sql.unsafe(`drop owned by ${role}`);
      await t.db.sql.unsafe(`drop role ${role}`);
    }
  });
});
