/**
 * Concurrency (issue 7.5), repeated: a few iterations in `npm test`, 100 of
 * each under `npm run soak`. Every iteration uses a fresh business and
 * races the same operations on one record; afterwards the invariants of the
 * whole database are checked:
 *
 * - every balance equals the sum of its ledger entries; no balance is negative;
 * - one payment per (businessId, clientPaymentId), one withdrawal per
 *   (businessId, clientWithdrawalId), one creation event per payment;
 * - a withdrawal's debit is in the ledger once, its credit-back at most once.
 *
 * A last test runs withdrawal broadcasts on a worker whose connection pool
 * is as large as its concurrency: the jobs must finish, not wait for ever.
 */
import { TRPCError } from '@trpc/server';
import { sql } from 'drizzle-orm';
import type { Runner } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../db/client.js';
import { startWorker } from '../../jobs/worker.js';
import { createOperator } from '../../server/modules/businesses/business.service.js';
import { postEntries } from '../../server/modules/ledger/ledger.service.js';
import { Dec } from '../../server/modules/money/decimal.js';
import { buildDeps } from '../../server/compose.js';
import { appRouter } from '../../server/edges/trpc/app-router.js';
import { createContextInner, type Operator } from '../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../server/edges/trpc/init.js';
import { startTestApp, type TestApp, type TestBusiness } from '../helpers/app.js';
import { startTestWorker } from '../helpers/worker.js';
import { scale, SOAK, waitFor } from './support.js';

const ITERATIONS = scale('KASSA_CONCURRENCY_ITERATIONS', 3, 100);
const TIMEOUT = SOAK ? 1_800_000 : 60_000;
const BTC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const createCaller = createCallerFactory(appRouter);

let t: TestApp;
let worker: Runner | null = null;
let ann: Operator;
let bob: Operator;
const as = (operator: Operator) => createCaller(createContextInner({ deps: t.deps, operator }));

async function operator(name: string): Promise<Operator> {
  const { operatorId } = await createOperator(t.db.db, `${name}-${randomUUID().slice(0, 6)}`, 'admin');
  return { id: operatorId, name, role: 'admin' };
}

beforeAll(async () => {
  // Deposits confirm at once (the worker settles them); broadcasts wait an hour, so withdrawals stay put.
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0', KASSA_SANDBOX_BROADCAST_DELAY_S: '3600' } });
  // The test clock starts in the past of the real one, where "an hour from now" is already due: the
  // broadcast then raced the test's reads of PROCESSING (and won once a batch-fetching worker got it
  // within milliseconds). At the real time, an hour from now is an hour away.
  t.clock.current = new Date();
  worker = await startTestWorker(t.deps);
  ann = await operator('ann');
  bob = await operator('bob');
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
});

const fund = (who: TestBusiness, amount: string) =>
  postEntries(t.db.db, [{ businessId: who.businessId, account: 'MERCHANT', currency: 'EUR', amount, kind: 'TEST' }], t.clock.now());

const withdraw = (who: TestBusiness, overrides: Record<string, unknown> = {}) =>
  t.signed(
    'POST',
    '/v1/withdrawals',
    { clientWithdrawalId: `cw-${randomUUID()}`, businessId: who.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.01', feePayer: 'RECIPIENT', ...overrides },
    who,
  );

/** The invariants of the whole database; returns a list of violations (empty when all hold). */
async function violations(): Promise<string[]> {
  const found: string[] = [];
  const q = async <T>(query: ReturnType<typeof sql>) => (await t.db.db.execute(query)) as unknown as T[];
  const mismatched = await q<{ business_id: string; account: string; currency: string; balance: string; entries: string }>(sql`
    select coalesce(b.business_id, e.business_id) as business_id, coalesce(b.account, e.account) as account, coalesce(b.currency, e.currency) as currency,
           b.amount::text as balance, e.total::text as entries
    from balances b
    full join (select business_id, account, currency, sum(amount) as total from ledger_entries group by 1, 2, 3) e
      on e.business_id = b.business_id and e.account = b.account and e.currency = b.currency
    where coalesce(b.amount, 0) <> coalesce(e.total, 0)`);
  for (const m of mismatched) found.push(`balance ${m.account}/${m.currency} of ${m.business_id} is ${m.balance} but its entries sum to ${m.entries}`);
  for (const n of await q<{ business_id: string; currency: string; amount: string }>(sql`select business_id, currency, amount::text from balances where amount < 0`)) {
    found.push(`negative balance ${n.amount} ${n.currency} of ${n.business_id}`);
  }
  for (const d of await q<{ client_payment_id: string; n: number }>(sql`select client_payment_id, count(*)::int as n from payments group by business_id, client_payment_id having count(*) > 1`)) {
    found.push(`${d.n} payments with clientPaymentId ${d.client_payment_id}`);
  }
  for (const d of await q<{ client_withdrawal_id: string; n: number }>(sql`select client_withdrawal_id, count(*)::int as n from withdrawals group by business_id, client_withdrawal_id having count(*) > 1`)) {
    found.push(`${d.n} withdrawals with clientWithdrawalId ${d.client_withdrawal_id}`);
  }
  for (const p of await q<{ id: string; n: number }>(sql`
    select p.id, (select count(*)::int from events e where e.entity_type = 'payment' and e.entity_id = p.id and e.from_status is null) as n
    from payments p where (select count(*) from events e where e.entity_type = 'payment' and e.entity_id = p.id and e.from_status is null) <> 1`)) {
    found.push(`payment ${p.id} has ${p.n} creation events`);
  }
  for (const w of await q<{ id: string; debits: number; credits: number; status: string }>(sql`
    select w.id, w.status,
           count(*) filter (where l.amount < 0)::int as debits, count(*) filter (where l.amount > 0)::int as credits
    from withdrawals w left join ledger_entries l on l.withdrawal_id = w.id and l.account = 'MERCHANT'
    group by w.id, w.status
    having count(*) filter (where l.amount < 0) <> 1
        or count(*) filter (where l.amount > 0) > (case when w.status in ('FAILED', 'BLOCKED', 'REJECTED') then 1 else 0 end)
        or count(*) filter (where l.amount > 0) < (case when w.status in ('FAILED', 'BLOCKED', 'REJECTED') then 1 else 0 end)`)) {
    found.push(`withdrawal ${w.id} (${w.status}) has ${w.debits} debits and ${w.credits} credits`);
  }
  return found;
}

describe(`races, ${ITERATIONS} iterations each, then the database-wide invariants`, () => {
  it('concurrent deposits to one payment: each credited exactly once, actual = Σ deposits', { timeout: TIMEOUT }, async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const b = await t.addBusiness({ name: `deposits ${i}` });
      const created = await t.signed('POST', '/v1/payments', { clientPaymentId: `cd-${i}`, businessId: b.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' }, b);
      expect(created.statusCode, created.body).toBe(200);
      const paymentId = created.json().paymentInfo.paymentId as string;
      const amounts = Array.from({ length: 6 }, (_, k) => new Dec('0.001').mul(k + 1).add(new Dec(i % 5).div(100000)).toFixed());
      const sent = await Promise.all(
        amounts.map((amount) => t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount }, b)),
      );
      for (const s of sent) expect(s.statusCode, s.body).toBe(200);
      const settled = await waitFor(
        async () => {
          const r = (await t.signed('GET', `/v1/payments/${paymentId}`, undefined, b)).json();
          return r.deposits.length === amounts.length && r.deposits.every((d: { status: string }) => d.status === 'CONFIRMED') ? r : null;
        },
        20_000,
        `the ${amounts.length} deposits of iteration ${i} to confirm`,
      );
      const total = amounts.reduce((s, a) => s.add(a), new Dec(0));
      expect(new Dec(settled.actualDepositAmount).eq(total), `${settled.actualDepositAmount} ≠ ${total.toFixed()}`).toBe(true);
      expect(['DEPOSITED', 'OVERPAID']).toContain(settled.status);
      const [row] = (await t.db.db.execute(sql`
        select count(*)::int as entries, count(distinct l.deposit_id)::int as deposits
        from ledger_entries l join deposits d on d.id = l.deposit_id where d.payment_id = ${paymentId}`)) as unknown as [{ entries: number; deposits: number }];
      // one MERCHANT and one FEES entry per deposit
      expect(row).toEqual({ entries: amounts.length * 2, deposits: amounts.length });
    }
    expect(await violations()).toEqual([]);
  });

  it('concurrent withdrawals on one balance: exactly as many accepted as it covers, never negative', { timeout: TIMEOUT }, async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const b = await t.addBusiness({ name: `withdrawals ${i}` });
      const covers = 3 + (i % 5);
      // 0.01 BTC × 60000 EUR, recipient pays the network fee: 600.00 EUR each
      await fund(b, new Dec(600).mul(covers).toFixed(2));
      const results = await Promise.all(Array.from({ length: covers * 3 }, () => withdraw(b)));
      const accepted = results.filter((r) => r.statusCode === 200);
      const refused = results.filter((r) => r.statusCode !== 200);
      expect(accepted).toHaveLength(covers);
      for (const r of refused) {
        expect(r.statusCode, r.body).toBe(422);
        expect(r.json().code).toBe('INSUFFICIENT_BALANCE');
      }
      const [balance] = (await t.db.db.execute(sql`select amount::text as amount from balances where business_id = ${b.businessId} and account = 'MERCHANT' and currency = 'EUR'`)) as unknown as [{ amount: string }];
      expect(new Dec(balance.amount).isZero(), balance.amount).toBe(true);
    }
    expect(await violations()).toEqual([]);
  });

  it('concurrent idempotent creates: one payment and one withdrawal per key, every answer the same record', { timeout: TIMEOUT }, async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const b = await t.addBusiness({ name: `idempotency ${i}` });
      await fund(b, '100000.00');
      const payment = { clientPaymentId: `idem-${i}`, businessId: b.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '10.00' };
      const creates = await Promise.all(Array.from({ length: 10 }, () => t.signed('POST', '/v1/payments', payment, b)));
      expect(creates.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
      expect(new Set(creates.map((r) => r.json().paymentInfo.paymentId)).size).toBe(1);

      // the same key with different bodies at once: one body wins, every other answer is a 409
      const conflicting = await Promise.all(
        ['10.00', '11.00', '12.00', '13.00'].map((displayAmount) => t.signed('POST', '/v1/payments', { ...payment, clientPaymentId: `idem-x-${i}`, displayAmount }, b)),
      );
      expect(conflicting.filter((r) => r.statusCode === 200)).toHaveLength(1);
      expect(conflicting.filter((r) => r.statusCode === 409).map((r) => r.json().code)).toEqual(Array(3).fill('IDEMPOTENCY_CONFLICT'));

      const body = { clientWithdrawalId: `idem-w-${i}`, amount: '0.01' };
      const withdrawals = await Promise.all(Array.from({ length: 10 }, () => withdraw(b, body)));
      expect(withdrawals.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
      expect(new Set(withdrawals.map((r) => r.json().withdrawalId)).size).toBe(1);
    }
    expect(await violations()).toEqual([]);
  });

  it('two operators deciding at the same instant: approvals counted once each, PROCESSING once; approve vs reject: one wins', { timeout: TIMEOUT }, async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const b = await t.addBusiness({ name: `approvals ${i}` });
      await as(ann).businesses.update({ businessId: b.businessId, approvalPolicy: 'TWO' });
      await fund(b, '10000.00');

      const w = (await withdraw(b)).json() as { withdrawalId: string; status: string };
      expect(w.status).toBe('PENDING_APPROVAL');
      const both = await Promise.allSettled([as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId }), as(bob).withdrawals.approve({ withdrawalId: w.withdrawalId })]);
      expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      const [state] = (await t.db.db.execute(sql`
        select w.status,
               (select count(*)::int from withdrawal_approvals a where a.withdrawal_id = w.id) as approvals,
               (select count(*)::int from events e where e.entity_type = 'withdrawal' and e.entity_id = w.id and e.to_status = 'PROCESSING') as to_processing,
               (select count(*)::int from graphile_worker.jobs j where j.key = 'broadcast_withdrawal:' || w.id) as broadcast_jobs
        from withdrawals w where w.id = ${w.withdrawalId}`)) as unknown as [Record<string, unknown>];
      expect(state).toEqual({ status: 'PROCESSING', approvals: 2, to_processing: 1, broadcast_jobs: 1 });

      // one operator approves while the other rejects: exactly one decision takes effect on the status
      const w2 = (await withdraw(b)).json() as { withdrawalId: string };
      await as(ann).withdrawals.approve({ withdrawalId: w2.withdrawalId });
      const race = await Promise.allSettled([as(bob).withdrawals.approve({ withdrawalId: w2.withdrawalId }), as(bob).withdrawals.reject({ withdrawalId: w2.withdrawalId })]);
      expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const loser = race.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      expect(loser.reason).toBeInstanceOf(TRPCError);
      const [final] = (await t.db.db.execute(sql`select status from withdrawals where id = ${w2.withdrawalId}`)) as unknown as [{ status: string }];
      expect(['PROCESSING', 'REJECTED']).toContain(final.status);
    }
    expect(await violations()).toEqual([]);
  });
});

describe('the worker under its own pool limit', () => {
  it('withdrawal broadcasts on a worker whose pool has as many connections as its concurrency complete (no pool deadlock)', async () => {
    // A database of its own: the main worker above must not take these jobs.
    const own = await startTestApp({ env: { KASSA_SANDBOX_BROADCAST_DELAY_S: '0' } });
    const database = connect(own.db.url, { max: 2 });
    let runner: Runner | null = null;
    try {
      await postEntries(own.db.db, [{ businessId: own.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '10000.00', kind: 'TEST' }], own.clock.now());
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await own.signed('POST', '/v1/withdrawals', {
          clientWithdrawalId: `pool-${i}`, businessId: own.business.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC, amount: '0.01',
        });
        expect(res.statusCode, res.body).toBe(200);
        ids.push(res.json().withdrawalId);
      }
      // like `npm start -- --role=worker` with a pool of 2: concurrency 2
      runner = await startWorker(buildDeps(own.deps.config, database, own.deps.masterKey, own.clock.now), { concurrency: 2, pollInterval: 50, crontab: false });
      await waitFor(
        async () => {
          const [row] = (await own.db.db.execute(sql`select count(*)::int as n from withdrawals where status = 'COMPLETED'`)) as unknown as [{ n: number }];
          return row.n === ids.length;
        },
        15_000,
        'the 4 broadcasts to complete (a hang here: the broadcast transaction waits for a second connection of a full pool)',
      );
    } finally {
      // Ending the pool first fails any query still waiting for a connection, so a deadlocked job ends and the runner can stop.
      await database.sql.end({ timeout: 1 });
      await runner?.stop();
      await own.close();
    }
  });
});
