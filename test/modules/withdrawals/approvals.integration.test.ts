/**
 * Withdrawal approvals (2024-04-01, 2024-05-29; CONTRACT §6, §8): the policy
 * is set through tRPC `businesses.update`; a withdrawal waits in
 * PENDING_APPROVAL until enough distinct operators approved; a rejection
 * ends it REJECTED, credits the balance back and queues a FAILED callback.
 * No worker runs: the broadcast job is only checked to be queued, once.
 */
import { TRPCError } from '@trpc/server';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackDeliveries, events as eventsTable } from '../../../db/schema.js';
import { createOperator } from '../../../server/modules/businesses/business.service.js';
import { getBalances, postEntries, sumEntries } from '../../../server/modules/ledger/ledger.service.js';
import { Dec } from '../../../server/modules/money/decimal.js';
import { appRouter } from '../../../server/edges/trpc/app-router.js';
import { createContextInner, type Operator } from '../../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';

const BTC_ADDRESS = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const createCaller = createCallerFactory(appRouter);

let t: TestApp;
let ann: Operator;
let bob: Operator;
let cat: Operator;
let vic: Operator;
const as = (operator: Operator) => createCaller(createContextInner({ deps: t.deps, operator }));

async function operator(name: string, role: 'admin' | 'viewer'): Promise<Operator> {
  const { operatorId } = await createOperator(t.db.db, name, role);
  return { id: operatorId, name, role };
}

/** The tRPC error code (and Kassa code) a call fails with; fails the test when the call succeeds. */
async function trpcError(call: Promise<unknown>): Promise<{ code: string; kassaCode: string | undefined }> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    const e = error as TRPCError;
    const cause = e.cause as { code?: string } | undefined;
    return { code: e.code, kassaCode: cause?.code };
  }
  throw new Error('expected the call to fail');
}

let seq = 0;
async function business(policy: 'NONE' | 'ONE' | 'TWO', settings: Record<string, unknown> = {}): Promise<TestBusiness> {
  const b = await t.addBusiness({ name: `Approvals ${policy}` });
  const updated = await as(ann).businesses.update({ businessId: b.businessId, approvalPolicy: policy, ...settings });
  expect(updated.approvalPolicy).toBe(policy);
  await postEntries(t.db.db, [{ businessId: b.businessId, account: 'MERCHANT', currency: 'EUR', amount: '10000.00', kind: 'TEST' }], t.clock.now());
  return b;
}

async function withdraw(b: TestBusiness) {
  const res = await t.signed(
    'POST',
    '/v1/withdrawals',
    { clientWithdrawalId: `appr-${++seq}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC_ADDRESS, amount: '0.01' },
    b,
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { withdrawalId: string; status: string; approvalsRequired: number; approvals: number; deductedSettlementAmount: string };
}

async function balance(b: TestBusiness): Promise<string> {
  const row = (await getBalances(t.db.db, b.businessId)).find((r) => r.account === 'MERCHANT' && r.currency === 'EUR');
  return new Dec(row!.amount).toFixed(2);
}

async function events(withdrawalId: string) {
  return t.db.db
    .select()
    .from(eventsTable)
    .where(and(eq(eventsTable.entityType, 'withdrawal'), eq(eventsTable.entityId, withdrawalId)))
    .orderBy(eventsTable.id);
}

async function broadcastJobs(withdrawalId: string): Promise<number> {
  const rows = (await t.db.db.execute(
    sql`select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
        where k.identifier = 'broadcast_withdrawal' and j.payload->>'withdrawalId' = ${withdrawalId}`,
  )) as unknown as [{ n: number }];
  return rows[0].n;
}

const status = async (b: TestBusiness, id: string) => (await t.signed('GET', `/v1/withdrawals/${id}`, undefined, b)).json();

beforeAll(async () => {
  t = await startTestApp();
  ann = await operator('ann', 'admin');
  bob = await operator('bob', 'admin');
  cat = await operator('cat', 'admin');
  vic = await operator('vic', 'viewer');
});
afterAll(async () => t?.close());

describe('policy NONE', () => {
  it('goes straight to PROCESSING with its broadcast queued; approving it is a CONFLICT', async () => {
    const b = await business('NONE');
    const w = await withdraw(b);
    expect(w.status).toBe('PROCESSING');
    expect(w.approvalsRequired).toBe(0);
    expect(await broadcastJobs(w.withdrawalId)).toBe(1);
    expect((await trpcError(as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId }))).code).toBe('CONFLICT');
  });
});

describe('policy ONE', () => {
  it('waits in PENDING_APPROVAL (debited, no broadcast queued) until one admin approves', async () => {
    const b = await business('ONE');
    const w = await withdraw(b);
    expect(w.status).toBe('PENDING_APPROVAL');
    expect(w.approvalsRequired).toBe(1);
    expect(await balance(b)).toBe('9398.80');
    expect(await broadcastJobs(w.withdrawalId)).toBe(0);

    const approved = await as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId });
    expect(approved.status).toBe('PROCESSING');
    expect(approved.approvals).toBe(1);
    expect((await status(b, w.withdrawalId)).status).toBe('PROCESSING');
    expect(await broadcastJobs(w.withdrawalId)).toBe(1);
    expect((await events(w.withdrawalId)).map((e) => [e.fromStatus, e.toStatus])).toEqual([
      [null, 'PENDING_APPROVAL'],
      ['PENDING_APPROVAL', 'PENDING_APPROVAL'], // the approval itself
      ['PENDING_APPROVAL', 'PROCESSING'],
    ]);
    // nothing left to approve
    const again = await trpcError(as(bob).withdrawals.approve({ withdrawalId: w.withdrawalId }));
    expect(again.code).toBe('CONFLICT');
  });

  it('a viewer can list but cannot approve or reject (FORBIDDEN)', async () => {
    const b = await business('ONE');
    const w = await withdraw(b);
    expect((await trpcError(as(vic).withdrawals.approve({ withdrawalId: w.withdrawalId }))).code).toBe('FORBIDDEN');
    expect((await trpcError(as(vic).withdrawals.reject({ withdrawalId: w.withdrawalId }))).code).toBe('FORBIDDEN');
    const listed = await as(vic).withdrawals.list({ businessId: b.businessId, status: 'PENDING_APPROVAL' });
    expect(listed.items.map((i) => i.withdrawalId)).toEqual([w.withdrawalId]);
    expect((await status(b, w.withdrawalId)).status).toBe('PENDING_APPROVAL');
  });

  it('no operator at all is UNAUTHORIZED', async () => {
    const b = await business('ONE');
    const w = await withdraw(b);
    const anonymous = createCaller(createContextInner({ deps: t.deps }));
    expect((await trpcError(anonymous.withdrawals.approve({ withdrawalId: w.withdrawalId }))).code).toBe('UNAUTHORIZED');
  });

  it('an unknown withdrawal is NOT_FOUND', async () => {
    expect((await trpcError(as(ann).withdrawals.approve({ withdrawalId: '00000000-0000-4000-8000-000000000000' }))).code).toBe('NOT_FOUND');
  });
});

describe('policy TWO (2024-05-29: a second, different approver)', () => {
  it('stays PENDING_APPROVAL after one approval; the same operator twice is a CONFLICT; a second operator releases it', async () => {
    const b = await business('TWO');
    const w = await withdraw(b);
    expect(w.status).toBe('PENDING_APPROVAL');
    expect(w.approvalsRequired).toBe(2);

    const first = await as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId });
    expect(first.status).toBe('PENDING_APPROVAL');
    expect(first.approvals).toBe(1);
    expect(await broadcastJobs(w.withdrawalId)).toBe(0);

    const twice = await trpcError(as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId }));
    expect(twice.code).toBe('CONFLICT');
    expect((await status(b, w.withdrawalId)).status).toBe('PENDING_APPROVAL');
    expect((await status(b, w.withdrawalId)).approvals).toBe(1);

    const second = await as(bob).withdrawals.approve({ withdrawalId: w.withdrawalId });
    expect(second.status).toBe('PROCESSING');
    expect(second.approvals).toBe(2);
    expect(await broadcastJobs(w.withdrawalId)).toBe(1);
  });

  it('the list, a replayed POST and GET by id report the same record, approvals included', async () => {
    const b = await business('TWO');
    const body = { clientWithdrawalId: `appr-${++seq}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC_ADDRESS, amount: '0.01' };
    const created = await t.signed('POST', '/v1/withdrawals', body, b);
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().withdrawalId as string;
    await as(ann).withdrawals.approve({ withdrawalId: id });
    const byId = await status(b, id);
    expect(byId.approvals).toBe(1);
    const listed = (await t.signed('GET', '/v1/withdrawals?status=PENDING_APPROVAL', undefined, b)).json();
    expect(listed.items.find((i: { withdrawalId: string }) => i.withdrawalId === id)).toEqual(byId);
    const viaTrpc = await as(ann).withdrawals.list({ businessId: b.businessId });
    expect(viaTrpc.items.find((i) => i.withdrawalId === id)?.approvals).toBe(1);
    const replay = await t.signed('POST', '/v1/withdrawals', body, b);
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toEqual(byId);
  });

  it('two different operators approving at the same instant move it to PROCESSING exactly once', async () => {
    const b = await business('TWO');
    const w = await withdraw(b);
    const results = await Promise.allSettled([
      as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId }),
      as(bob).withdrawals.approve({ withdrawalId: w.withdrawalId }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const statuses = results.map((r) => (r as PromiseFulfilledResult<{ status: string }>).value.status).sort();
    expect(statuses).toEqual(['PENDING_APPROVAL', 'PROCESSING']);
    const toProcessing = (await events(w.withdrawalId)).filter((e) => e.toStatus === 'PROCESSING');
    expect(toProcessing).toHaveLength(1);
    expect(await broadcastJobs(w.withdrawalId)).toBe(1);
    expect((await status(b, w.withdrawalId)).status).toBe('PROCESSING');
  });

  it('three operators at the same instant: two approvals count, the third is refused, PROCESSING once', async () => {
    const b = await business('TWO');
    const w = await withdraw(b);
    const results = await Promise.allSettled([ann, bob, cat].map((op) => as(op).withdrawals.approve({ withdrawalId: w.withdrawalId })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect((refused[0]!.reason as TRPCError).code).toBe('CONFLICT');
    expect((await events(w.withdrawalId)).filter((e) => e.toStatus === 'PROCESSING')).toHaveLength(1);
    expect(await broadcastJobs(w.withdrawalId)).toBe(1);
  });

  it('the same operator approving twice at the same instant counts once', async () => {
    const b = await business('TWO');
    const w = await withdraw(b);
    const results = await Promise.allSettled([0, 1].map(() => as(cat).withdrawals.approve({ withdrawalId: w.withdrawalId })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    const now = await status(b, w.withdrawalId);
    expect(now.status).toBe('PENDING_APPROVAL');
    expect(now.approvals).toBe(1);
  });
});

describe('rejection', () => {
  it('REJECTED: balance credited back, a FAILED callback queued, no broadcast, no further decisions', async () => {
    const b = await business('TWO', { withdrawalCallbackUrl: 'https://merchant.example/callbacks' });
    const w = await withdraw(b);
    expect(await balance(b)).toBe('9398.80');
    await as(ann).withdrawals.approve({ withdrawalId: w.withdrawalId });

    const rejected = await as(bob).withdrawals.reject({ withdrawalId: w.withdrawalId, reason: 'destination not verified' });
    expect(rejected.status).toBe('REJECTED');
    // The reason is kept in the withdrawal's event, as the CLI's --reason is.
    const [event] = await t.db.sql`select reason from events where entity_type = 'withdrawal' and entity_id = ${w.withdrawalId} and to_status = 'REJECTED'`;
    expect(event!.reason).toBe(`rejected by ${bob.name}: destination not verified`);
    expect((await status(b, w.withdrawalId)).status).toBe('REJECTED');
    expect(await balance(b)).toBe('10000.00');
    const norm = (rows: { account: string; currency: string; amount: string }[]) => rows.map((r) => `${r.account}/${r.currency}/${new Dec(r.amount).toFixed()}`).sort();
    expect(norm(await getBalances(t.db.db, b.businessId))).toEqual(norm(await sumEntries(t.db.db, b.businessId)));
    expect(await broadcastJobs(w.withdrawalId)).toBe(0);

    // REJECTED ends as a FAILED callback (CONTRACT §6), with exactly the FAILED keys of spec §6.2
    const deliveries = await as(ann).callbacks.list({ subjectId: w.withdrawalId });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ kind: 'WITHDRAWAL', status: 'PENDING', url: 'https://merchant.example/callbacks' });
    const body = deliveries[0]!.body as Record<string, unknown>;
    expect(body).toEqual({
      status: 'FAILED',
      clientWithdrawalId: `appr-${seq}`,
      businessId: b.businessId,
      withdrawalId: w.withdrawalId,
      displayCurrency: 'EUR',
      withdrawCurrency: 'BTC',
      settlementCurrency: 'EUR',
      expectedDisplayAmount: '600.00',
      estimatedWithdrawAmount: '0.01',
      toTxAddress: BTC_ADDRESS,
      txAddressOwner: { name: expect.any(String), category: expect.any(String) },
    });
    // Queued: due now, for the worker's dispatcher to claim.
    expect(deliveries[0]!.nextAttemptAt).toBeTypeOf('number');
    expect(deliveries[0]!.nextAttemptAt!).toBeLessThanOrEqual(Date.now());

    expect((await trpcError(as(cat).withdrawals.approve({ withdrawalId: w.withdrawalId }))).code).toBe('CONFLICT');
    expect((await trpcError(as(cat).withdrawals.reject({ withdrawalId: w.withdrawalId }))).code).toBe('CONFLICT');
    expect(await balance(b)).toBe('10000.00');
    const toRejected = (await events(w.withdrawalId)).filter((e) => e.toStatus === 'REJECTED');
    expect(toRejected).toHaveLength(1);
  });

  it('a business without a withdrawalCallbackUrl gets no callback row', async () => {
    const b = await business('ONE');
    const w = await withdraw(b);
    await as(ann).withdrawals.reject({ withdrawalId: w.withdrawalId });
    const rows = await t.db.db.select().from(callbackDeliveries).where(and(eq(callbackDeliveries.subjectId, w.withdrawalId)));
    expect(rows).toHaveLength(0);
    expect(await balance(b)).toBe('10000.00');
  });

  it('a policy change applies to withdrawals created after it, not to those already waiting', async () => {
    const b = await business('TWO');
    const waiting = await withdraw(b);
    await as(ann).businesses.update({ businessId: b.businessId, approvalPolicy: 'NONE' });
    const later = await withdraw(b);
    expect(later.status).toBe('PROCESSING');
    expect((await status(b, waiting.withdrawalId)).status).toBe('PENDING_APPROVAL');
    expect((await status(b, waiting.withdrawalId)).approvalsRequired).toBe(2);
  });
});
