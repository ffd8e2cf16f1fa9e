/**
 * Batched creates (platform/batch.ts, payment.service.ts) from two processes'
 * pools at once, the same clientPaymentIds sent in opposite orders: each
 * payment is written once and both callers get it. Each batch writes its rows
 * in the unique index's order, so two overlapping batches wait for each other
 * instead of deadlocking; whether their statements overlap at all is up to
 * timing (unsorted, no deadlock showed in these rounds either), so the
 * deadlock count is a check, not a proof of the ordering. Each payment written
 * has exactly one creation event (the statement trigger of migration 0011),
 * and a row the conflict skipped none.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, type Database } from '../../../db/client.js';
import { createPayment } from '../../../server/modules/payments/payment.service.js';
import { getBusiness } from '../../../server/modules/businesses/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let other: Database;

beforeAll(async () => {
  t = await startTestApp();
  other = connect(t.db.url, { max: 2 });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const deadlocks = async () => {
  await t.db.sql`select pg_stat_force_next_flush()`;
  const [row] = await t.db.sql<{ n: string }[]>`select deadlocks::text as n from pg_stat_database where datname = current_database()`;
  return Number(row!.n);
};

it('two pools creating the same 40 payments in opposite orders: each written once, both callers answered with it, no deadlock counted', async () => {
  // The business row given, as authentication gives it: nothing is read before the INSERT.
  const caller = { businessId: t.business.businessId, apiKey: t.business.apiKey, business: await getBusiness(t.db.db, t.business.businessId) };
  const input = (clientPaymentId: string) => ({ clientPaymentId, businessId: t.business.businessId, locale: 'en-US', displayCurrency: 'EUR' as const, displayAmount: '12.00' });
  const deps = { ...t.deps, database: other };
  const before = await deadlocks();
  for (let round = 0; round < 3; round++) {
    const ids = Array.from({ length: 40 }, (_, i) => `batch-order-${round}-${String(i).padStart(2, '0')}`);
    // Each pool's batch holds the same 40 ids, the second in the reverse order.
    const [mine, theirs] = await Promise.all([
      Promise.all(ids.map((id) => createPayment(t.deps, caller, input(id)))),
      Promise.all([...ids].reverse().map((id) => createPayment(deps, caller, input(id)))).then((r) => r.reverse()),
    ]);
    expect(mine.map((r) => r.record.paymentId)).toEqual(theirs.map((r) => r.record.paymentId));
    expect([...mine, ...theirs].filter((r) => r.created)).toHaveLength(ids.length);
    const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from payments where client_payment_id = any(${ids})`;
    expect(row!.n).toBe(ids.length);
    const events = await t.db.sql<{ client_payment_id: string; to_status: string; same_time: boolean }[]>`
      select p.client_payment_id, e.to_status, e.at = p.created_at as same_time
      from payments p join events e on e.entity_type = 'payment' and e.entity_id = p.id and e.reason = 'created'
      where p.client_payment_id = any(${ids}) and e.from_status is null order by p.client_payment_id`;
    expect(events).toEqual(ids.map((id) => ({ client_payment_id: id, to_status: 'NEW', same_time: true })));
  }
  expect(await deadlocks()).toBe(before);
});
