/**
 * db/client.ts opens three pools: the main one, where PostgreSQL chooses custom or generic plans
 * itself (a status given as a parameter still reaches its partial index), and two for batched
 * statements over arrays, which always run the generic plan (the create INSERT was planned again
 * on every execution): the read stamps' batch pool, one connection for each batch it keeps in
 * flight, and the creates' one connection, where a second batch waits behind the first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, BATCHES_IN_FLIGHT, GENERIC_POOL_SIZE } from '../../db/client.js';
import { cachedPaymentJson, getPayment } from '../../server/modules/payments/index.js';
import { createPayment } from '../../server/modules/payments/payment.service.js';
import { getBusiness } from '../../server/modules/businesses/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { genericPoolPrepared } from '../helpers/db.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

type Plans = { statements: number; generic: number; custom: number };

/** The prepared statements like `pattern` on every connection of the batch pool, and how they were planned. */
async function genericPlans(pattern: string): Promise<Plans> {
  const seen = await genericPoolPrepared(t.db, pattern);
  return { statements: seen.length, generic: seen.reduce((sum, row) => sum + row.generic_plans, 0), custom: seen.reduce((sum, row) => sum + row.custom_plans, 0) };
}

const planMode = async (sql: TestApp['db']['sql']) => (await sql<{ plan_cache_mode: string }[]>`show plan_cache_mode`)[0]!.plan_cache_mode;

describe('the three pools of a Database', () => {
  it('the main pool plans as PostgreSQL chooses; the batch pool and the creates connection always use generic plans', async () => {
    expect(await planMode(t.db.sql)).toBe('auto');
    expect(await planMode(t.db.generic)).toBe('force_generic_plan');
    expect(await planMode(t.db.creates)).toBe('force_generic_plan');
    expect(BATCHES_IN_FLIGHT).toBe(1);
    expect(GENERIC_POOL_SIZE).toBe(1);
  });

  it('a batch of creates runs its INSERT as a prepared statement of the creates connection, with its generic plan', async () => {
    const caller = { businessId: t.business.businessId, apiKey: t.business.apiKey, business: await getBusiness(t.db.db, t.business.businessId) };
    const input = (clientPaymentId: string) => ({ clientPaymentId, businessId: t.business.businessId, locale: 'en-US', displayCurrency: 'EUR' as const, displayAmount: '3.00' });
    for (let round = 0; round < 3; round++) {
      await Promise.all(['a', 'b', 'c'].map((id) => createPayment(t.deps, caller, input(`plans-${round}-${id}`))));
    }
    const total = await genericPlans('insert into payments%');
    expect(total.statements).toBeGreaterThanOrEqual(1);
    // One execution a batch: each round is one batch or, if its creates reach the batcher apart, more.
    expect(total.generic).toBeGreaterThanOrEqual(3);
    expect(total.custom).toBe(0);
  });

  it('the reads of one turn ask for their stamps in one execution of a prepared statement of the batch pool, with its generic plan', async () => {
    const created = await Promise.all(['r1', 'r2', 'r3'].map((id) => t.signed('POST', '/v1/payments', {
      clientPaymentId: `plans-read-${id}`, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
    })));
    const ids = created.map((res) => res.json().paymentInfo.paymentId as string);
    const read = (id: string) => cachedPaymentJson(t.deps, t.business.businessId, id, undefined, () => getPayment(t.deps, t.business.businessId, id));
    const before = await genericPlans('%json_to_recordset%x(i int, payment_id uuid%');
    const records = await Promise.all(ids.map(read));
    const after = await genericPlans('%json_to_recordset%x(i int, payment_id uuid%');
    expect(records.map((json) => JSON.parse(json).paymentId)).toEqual(ids);
    expect(after.statements).toBe(1);
    // Three reads, one execution.
    expect(after.generic - before.generic).toBe(1);
    expect(after.custom).toBe(0);
  });
});

describe('answered', () => {
  /** Whether `value` reaches `target` through its own properties, a few levels deep (functions not followed). */
  const reaches = (value: unknown, target: string, depth = 0): boolean =>
    value === target || (depth < 4 && value !== null && typeof value === 'object' && Object.values(value).some((v) => reaches(v, target, depth + 1)));

  it("gives the query's rows, and the answered query object no longer holds its parameter (a batch's JSON)", async () => {
    const parameter = `[${'"x",'.repeat(2000)}"y"]`;
    const query = t.db.generic.unsafe<{ n: number }[]>('select json_array_length($1::text::json) as n', [parameter], { prepare: true });
    expect((await answered(query))[0]!.n).toBe(2001);
    expect(reaches(query, parameter)).toBe(false);

    // What it is for: a query awaited as it is keeps the parameter for as long as the object lives.
    const kept = `[${'"x",'.repeat(1000)}"z"]`;
    const plain = t.db.generic.unsafe<{ n: number }[]>('select json_array_length($1::text::json) as n', [kept], { prepare: true });
    expect((await plain)[0]!.n).toBe(1001);
    expect(reaches(plain, kept)).toBe(true);
  });
});

