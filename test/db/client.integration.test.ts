/**
 * db/client.ts opens two pools: the main one, where PostgreSQL chooses custom or generic plans
 * itself (a status given as a parameter still reaches its partial index), and the small one for
 * batched statements over arrays, which always runs the generic plan (the create INSERT was
 * planned again on every execution). The create batch must use the second pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERIC_POOL_SIZE } from '../../db/client.js';
import { createPayment } from '../../server/modules/payments/payment.service.js';
import { getBusiness } from '../../server/modules/businesses/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const planMode = async (sql: TestApp['db']['sql']) => (await sql<{ plan_cache_mode: string }[]>`show plan_cache_mode`)[0]!.plan_cache_mode;

describe('the two pools of a Database', () => {
  it('the main pool plans as PostgreSQL chooses; the batch pool always uses generic plans', async () => {
    expect(await planMode(t.db.sql)).toBe('auto');
    expect(await planMode(t.db.generic)).toBe('force_generic_plan');
    expect(GENERIC_POOL_SIZE).toBe(2);
  });

  it('a batch of creates runs its INSERT as a prepared statement of the batch pool, with its generic plan', async () => {
    const caller = { businessId: t.business.businessId, apiKey: t.business.apiKey, business: await getBusiness(t.db.db, t.business.businessId) };
    const input = (clientPaymentId: string) => ({ clientPaymentId, businessId: t.business.businessId, locale: 'en-US', displayCurrency: 'EUR' as const, displayAmount: '3.00' });
    for (let round = 0; round < 3; round++) {
      await Promise.all(['a', 'b', 'c'].map((id) => createPayment(t.deps, caller, input(`plans-${round}-${id}`))));
    }
    // pg_prepared_statements is per session: hold every connection of the pool and ask each.
    type Plans = { statements: number; generic: number; custom: number };
    const plansOf = `select count(*)::int as statements, coalesce(sum(generic_plans), 0)::int as generic, coalesce(sum(custom_plans), 0)::int as custom
      from pg_prepared_statements where statement like 'insert into payments%'`;
    const held = await Promise.all(Array.from({ length: GENERIC_POOL_SIZE }, () => t.db.generic.reserve()));
    const seen = await Promise.all(held.map(async (c) => (await c.unsafe<Plans[]>(plansOf))[0]!));
    held.forEach((c) => c.release());
    const total = seen.reduce((sum, row) => ({ statements: sum.statements + row.statements, generic: sum.generic + row.generic, custom: sum.custom + row.custom }));
    expect(total.statements).toBeGreaterThanOrEqual(1);
    // One execution a batch: each round is one batch or, if its creates reach the batcher apart, more.
    expect(total.generic).toBeGreaterThanOrEqual(3);
    expect(total.custom).toBe(0);
  });
});
