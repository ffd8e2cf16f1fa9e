/**
 * The batched statements that confirm cached callers (the create INSERT and the read stamps) check
 * each row's proof by looking its API key up by primary key, under the generic plan the batch pool
 * always uses, however many businesses there are. With `EXISTS`, PostgreSQL planned a hashed
 * subplan instead, which reads every API key and business at each execution: it did so here with
 * 3,000 businesses, and with 5,000 the create ran at less than half its rate with one (caller-proof.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { genericPoolPrepared } from '../../helpers/db.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** The text of the batch pool's prepared statements like `pattern`, once each. */
const preparedTexts = async (pattern: string) => [...new Set((await genericPoolPrepared(t.db, pattern)).map((row) => row.statement))];

/** The statement's generic plan, as the batch pool runs it. */
async function genericPlan(text: string): Promise<string> {
  const rows = await t.db.sql.unsafe<Record<string, string>[]>(`explain (generic_plan, costs off) ${text}`);
  return rows.map((row) => Object.values(row)[0]).join('\n');
}

describe('the proof check of a batch of cached callers', () => {
  it('looks each key up by primary key and never hashes the keys, in the create INSERT and in the read stamps', async () => {
    const created = await Promise.all(['p1', 'p2', 'p3'].map((id) => t.signed('POST', '/v1/payments', {
      clientPaymentId: `proof-plan-${id}-${Date.now()}`, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
    })));
    for (const res of created) expect(res.statusCode, res.body).toBe(200);
    // Signed reads reach the stamps' batch with the cached caller's proof.
    for (const res of created) expect((await t.signed('GET', `/v1/payments/${res.json().paymentInfo.paymentId}`)).statusCode).toBe(200);

    // 3,000 more businesses, each with a key like the test business's: enough that reading every key
    // at each execution costs more than a few lookups, so the plan shows which one is made.
    await t.db.sql`
      with added as (
        insert into businesses
        select (jsonb_populate_record(null::businesses, to_jsonb(b) || jsonb_build_object('id', gen_random_uuid()))).*
        from businesses b, generate_series(1, 3000) where b.id = ${t.business.businessId}
        returning id)
      insert into api_keys
      select (jsonb_populate_record(null::api_keys, to_jsonb(k) || jsonb_build_object('id', gen_random_uuid(), 'key', 'plan-' || added.id, 'business_id', added.id))).*
      from (select * from api_keys where business_id = ${t.business.businessId} limit 1) k, added`;
    await t.db.sql`analyze api_keys, businesses`;

    const statements = [...(await preparedTexts('insert into payments%')), ...(await preparedTexts('%from json_to_recordset%x(i int, payment_id uuid%'))];
    expect(statements).toHaveLength(2);
    expect((await t.db.sql<{ n: number }[]>`select count(*)::int as n from api_keys`)[0]!.n).toBeGreaterThan(3000);
    for (const text of statements) {
      const plan = await genericPlan(text);
      expect(plan, plan).toContain('Index Scan using api_keys_pkey on api_keys k');
      expect(plan, plan).not.toMatch(/hashed SubPlan|Seq Scan on (api_keys|businesses)/);
    }
  });
});
