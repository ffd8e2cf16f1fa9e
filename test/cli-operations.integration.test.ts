/**
 * The operator commands of the CLI (CONTRACT §9) as a real child process on
 * the database of a real server: each --json output is one JSON object, what
 * it changes is what the server then does (a revoked key is refused, both
 * secrets sign during a rotation, approvals move withdrawals), failures exit
 * non-zero with a message on stderr.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businesses, previousCallbackSecrets } from '../db/schema.js';
import { createOperator } from '../server/modules/businesses/business.service.js';
import { attemptDelivery, enqueueCallback } from '../server/modules/callbacks/delivery.service.js';
import { verifyCallback } from '../server/modules/callbacks/signing.js';
import { postEntries, sumEntries } from '../server/modules/ledger/ledger.service.js';
import { Dec } from '../server/modules/money/decimal.js';
import { startTestApp, type TestApp, type TestBusiness } from './helpers/app.js';
import { cliOn, singleJson } from './helpers/cli.js';
import { Receiver, headersOf } from './modules/callbacks/receiver.js';

const BTC_ADDRESS = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

let t: TestApp;
let receiver: Receiver;
const kassa = cliOn(() => t.db.url);

/** Run a --json command that must succeed; its one JSON object. */
async function ok(...args: string[]): Promise<Record<string, unknown>> {
  const r = await kassa(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return singleJson(r.stdout);
}

beforeAll(async () => {
  t = await startTestApp();
  receiver = await new Receiver().start();
  await createOperator(t.db.db, 'ann', 'admin');
  await createOperator(t.db.db, 'bob', 'admin');
  await createOperator(t.db.db, 'vic', 'viewer');
});
afterAll(async () => {
  await receiver?.stop();
  await t?.close();
});

let seq = 0;
async function withdraw(b: TestBusiness, amount = '0.01') {
  const res = await t.signed(
    'POST',
    '/v1/withdrawals',
    { clientWithdrawalId: `cli-${++seq}`, businessId: b.businessId, withdrawCurrency: 'BTC', network: 'BTC', address: BTC_ADDRESS, amount },
    b,
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { withdrawalId: string; status: string; deductedSettlementAmount: string };
}

describe('business:list and business:update', { timeout: 120_000 }, () => {
  it('lists every business with its settings and no secret', async () => {
    const other = await t.addBusiness({ name: 'Second shop' });
    const out = await ok('business:list');
    const list = out.businesses as Record<string, unknown>[];
    expect(list.map((b) => b.businessId)).toEqual(expect.arrayContaining([t.business.businessId, other.businessId]));
    const second = list.find((b) => b.businessId === other.businessId)!;
    expect(second.id).toBe(second.businessId);
    expect(second).toMatchObject({ name: 'Second shop', approvalPolicy: 'NONE', requireWhitelist: false, serviceFeePercent: '1', settlementCurrency: 'EUR' });
    expect(second).not.toHaveProperty('callbackSecretEnc');
    expect(JSON.stringify(out)).not.toContain(other.callbackSecret);
  });

  it('changes each setting the contract names, stored as given', async () => {
    const b = await t.addBusiness({ name: 'Settings' });
    const out = await ok(
      'business:update', '--business', b.businessId,
      '--withdrawal-callback-url', 'https://shop.example/w', '--payment-callback-url', 'https://shop.example/p',
      '--approval-policy', 'two', '--require-whitelist', 'true', '--service-fee-percent', '2.5', '--user-fee-share', '50',
      '--review-threshold', '4', '--block-threshold', '9', '--allowed-networks', 'USDT=ETH,TRX', '--allowed-networks', 'BTC=BTC',
    );
    expect(out).toMatchObject({
      id: b.businessId, approvalPolicy: 'TWO', requireWhitelist: true, serviceFeePercent: '2.5', userFeeSharePercent: '50',
      riskReviewThreshold: '4', riskBlockThreshold: '9', allowedNetworks: { USDT: ['ETH', 'TRX'], BTC: ['BTC'] },
      withdrawalCallbackUrl: 'https://shop.example/w', paymentCallbackUrl: 'https://shop.example/p',
    });
    const row = await t.db.db.query.businesses.findFirst({ where: eq(businesses.id, b.businessId) });
    expect(row).toMatchObject({ approvalPolicy: 'TWO', requireWhitelist: true, serviceFeePercent: '2.5', allowedNetworks: { USDT: ['ETH', 'TRX'], BTC: ['BTC'] } });

    // "none" removes a callback URL, "all" the network restriction; the rest stays.
    const cleared = await ok('business:update', '--business', b.businessId, '--payment-callback-url', 'none', '--allowed-networks', 'all');
    expect(cleared).toMatchObject({ paymentCallbackUrl: null, allowedNetworks: {}, approvalPolicy: 'TWO', withdrawalCallbackUrl: 'https://shop.example/w' });
  });

  it('refuses bad values with exit 2 naming the flag, and changes nothing', async () => {
    const b = await t.addBusiness({ name: 'Strict' });
    const policy = await kassa('business:update', '--business', b.businessId, '--approval-policy', 'three', '--json');
    expect(policy.code).toBe(2);
    expect(policy.stdout).toBe('');
    expect(policy.stderr).toMatch(/^--approval-policy: /);
    const network = await kassa('business:update', '--business', b.businessId, '--allowed-networks', 'BTC=ETH');
    expect(network.code).toBe(2);
    expect(network.stderr).toContain('BTC is not deposited on ETH');
    const fee = await kassa('business:update', '--business', b.businessId, '--service-fee-percent', '101');
    expect(fee.code).toBe(2);
    expect(fee.stderr).toMatch(/^--service-fee-percent: /);
    const inverted = await kassa('business:update', '--business', b.businessId, '--review-threshold', '9.5');
    expect(inverted.code).toBe(1);
    expect(inverted.stderr).toMatch(/^RISK_THRESHOLDS_INVERTED: The review threshold \(9.5\) is above the block threshold \(8\)/);
    const nothing = await kassa('business:update', '--business', b.businessId);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('at least one setting');
    const row = await t.db.db.query.businesses.findFirst({ where: eq(businesses.id, b.businessId) });
    expect(row).toMatchObject({ approvalPolicy: 'NONE', allowedNetworks: {}, serviceFeePercent: '1' });

    const unknown = await kassa('business:update', '--business', '00000000-0000-4000-8000-000000000000', '--require-whitelist', 'true', '--json');
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^NOT_FOUND: Business 00000000-0000-4000-8000-000000000000 not found/);
  });
});

describe('apikey:list and apikey:revoke', { timeout: 120_000 }, () => {
  it('lists keys without secrets; a revoked key is refused from its next request on', async () => {
    const b = await t.addBusiness({ name: 'Keys' });
    const second = await ok('apikey:create', '--business', b.businessId, '--scopes', 'READ_PAYMENT');
    const listed = await ok('apikey:list', '--business', b.businessId);
    const keys = listed.apiKeys as { apiKey: string; scopes: string[]; createdAt: number; revokedAt: number | null }[];
    expect(keys.map((k) => k.apiKey).sort()).toEqual([b.apiKey, second.apiKey].sort());
    // Times in --json as the APIs write them: integer UNIX seconds.
    for (const k of keys) expect(Math.abs(k.createdAt - Date.now() / 1000)).toBeLessThan(120);
    expect(keys.find((k) => k.apiKey === second.apiKey)).toMatchObject({ scopes: ['READ_PAYMENT'], revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(b.apiSecret);
    expect(JSON.stringify(listed)).not.toContain(String(second.apiSecret));

    expect((await t.signed('GET', '/v1/payments?limit=1', undefined, b)).statusCode).toBe(200);
    const revoked = await ok('apikey:revoke', '--key', b.apiKey);
    expect(revoked).toMatchObject({ apiKey: b.apiKey, businessId: b.businessId });
    expect(Number.isInteger(revoked.revokedAt)).toBe(true);
    expect(Math.abs(Number(revoked.revokedAt) - Date.now() / 1000)).toBeLessThan(120);
    expect((await t.signed('GET', '/v1/payments?limit=1', undefined, b)).statusCode).toBe(401);
    // The other key of the business still works.
    const other = { apiKey: String(second.apiKey), apiSecret: String(second.apiSecret) };
    expect((await t.signed('GET', '/v1/payments?limit=1', undefined, other)).statusCode).toBe(200);

    const again = await kassa('apikey:revoke', '--key', b.apiKey, '--json');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^NOT_FOUND: Active API key /);
    const after = (await ok('apikey:list', '--business', b.businessId)).apiKeys as { apiKey: string; revokedAt: number | null }[];
    expect(after.find((k) => k.apiKey === b.apiKey)?.revokedAt).toBe(revoked.revokedAt);
  });
});

describe('callback-secret:rotate', { timeout: 120_000 }, () => {
  it('during the overlap a callback carries signatures by the new and the old secret; after it, only the new', async () => {
    const b = await t.addBusiness({ name: 'Rotate', paymentCallbackUrl: receiver.url('/rotate') });
    const rotated = await ok('callback-secret:rotate', '--business', b.businessId, '--overlap-hours', '2');
    expect(rotated.businessId).toBe(b.businessId);
    expect(rotated.callbackSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(rotated.callbackSecret).not.toBe(b.callbackSecret);
    const until = Number(rotated.previousSecretValidUntil) * 1000;
    expect(until - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
    expect(Number.isInteger(rotated.previousSecretValidUntil)).toBe(true);
    const stored = await t.db.db.select().from(previousCallbackSecrets).where(eq(previousCallbackSecrets.businessId, b.businessId));
    expect(stored).toHaveLength(1);
    expect(stored[0]!.secretEnc).not.toContain(b.callbackSecret);

    const send = async (at: number) => {
      t.clock.current = new Date(at);
      const id = await t.db.db.transaction((tx) =>
        enqueueCallback(tx, { businessId: b.businessId, kind: 'PAYMENT', subjectId: crypto.randomUUID(), url: receiver.url('/rotate'), body: { n: at } }, t.clock.now()),
      );
      expect(await attemptDelivery(t.deps, id)).toBe('DELIVERED');
      return receiver.hitsFor('/rotate').at(-1)!;
    };
    const during = await send(until - 60_000);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const now = { now: t.clock.now() };
    expect(verifyCallback(String(rotated.callbackSecret), headersOf(during), during.body, now)).toEqual({ n: until - 60_000 });
    expect(verifyCallback(b.callbackSecret, headersOf(during), during.body, now)).toEqual({ n: until - 60_000 });

    const later = await send(until + 1_000);
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyCallback(String(rotated.callbackSecret), headersOf(later), later.body, { now: t.clock.now() })).toEqual({ n: until + 1_000 });
    expect(() => verifyCallback(b.callbackSecret, headersOf(later), later.body, { now: t.clock.now() })).toThrow('no matching signature');
  });

  it('a second rotation while the first overlap runs is refused (it would stop the old secret early) unless --replace-previous', async () => {
    const b = await t.addBusiness({ name: 'Rotate twice' });
    const first = await ok('callback-secret:rotate', '--business', b.businessId, '--overlap-hours', '24');
    const before = await t.db.db.select().from(previousCallbackSecrets).where(eq(previousCallbackSecrets.businessId, b.businessId));
    const again = await kassa('callback-secret:rotate', '--business', b.businessId, '--overlap-hours', '1', '--json');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^OVERLAP_IN_PROGRESS: The secret replaced by the last rotation still signs until \S+; rotating now would stop it at once\./);
    expect(await t.db.db.select().from(previousCallbackSecrets).where(eq(previousCallbackSecrets.businessId, b.businessId))).toEqual(before);
    const [{ enc }] = (await t.db.sql`select callback_secret_enc as enc from businesses where id = ${b.businessId}`) as unknown as [{ enc: string }];
    const replaced = await ok('callback-secret:rotate', '--business', b.businessId, '--overlap-hours', '1', '--replace-previous');
    expect(replaced.callbackSecret).not.toBe(first.callbackSecret);
    const [after] = await t.db.db.select().from(previousCallbackSecrets).where(eq(previousCallbackSecrets.businessId, b.businessId));
    expect(after!.secretEnc).toBe(enc); // the first rotation's secret now overlaps with the new one
  });

  it('refuses an overlap out of range with exit 2, and an unknown business with exit 1', async () => {
    const bad = await kassa('callback-secret:rotate', '--business', t.business.businessId, '--overlap-hours', '-1');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--overlap-hours');
    const long = await kassa('callback-secret:rotate', '--business', t.business.businessId, '--overlap-hours', '721');
    expect(long.code).toBe(2);
    const missing = await kassa('callback-secret:rotate', '--business', '00000000-0000-4000-8000-000000000000', '--json');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^NOT_FOUND: /);
  });
});

describe('withdrawal:approve|reject, balances, deliveries', { timeout: 180_000 }, () => {
  it('policy TWO: two different admins approve; a reject credits back; balances equal the ledger at each step', async () => {
    const b = await t.addBusiness({ name: 'Payouts', withdrawalCallbackUrl: receiver.url('/payouts') });
    await ok('business:update', '--business', b.businessId, '--approval-policy', 'two');
    await postEntries(t.db.db, [{ businessId: b.businessId, account: 'MERCHANT', currency: 'EUR', amount: '10000.00', kind: 'TEST' }], t.clock.now());

    const first = await withdraw(b);
    const second = await withdraw(b);
    expect(first.status).toBe('PENDING_APPROVAL');
    const deducted = new Dec(first.deductedSettlementAmount).add(second.deductedSettlementAmount);

    // Balances while both wait: available is the ledger's, pending the two debits.
    const waiting = (await ok('balances', '--business', b.businessId)).balances as { currency: string; available: string; pending: string }[];
    const [ledger] = await sumEntries(t.db.db, b.businessId);
    expect(waiting).toEqual([{ currency: 'EUR', available: new Dec(ledger!.amount).toFixed(2), pending: deducted.toFixed(2) }]);
    expect(new Dec(waiting[0]!.available).add(waiting[0]!.pending).toFixed(2)).toBe('10000.00');

    const one = await ok('withdrawal:approve', '--withdrawal', first.withdrawalId, '--operator', 'ann');
    expect(one).toMatchObject({ withdrawalId: first.withdrawalId, status: 'PENDING_APPROVAL', approvals: 1, approvalsRequired: 2 });
    const twice = await kassa('withdrawal:approve', '--withdrawal', first.withdrawalId, '--operator', 'ann', '--json');
    expect(twice.code).toBe(1);
    expect(twice.stdout).toBe('');
    expect(twice.stderr).toMatch(/^ALREADY_DECIDED: /);
    const viewer = await kassa('withdrawal:approve', '--withdrawal', first.withdrawalId, '--operator', 'vic');
    // Refusals: exit 1 and one line naming the code, as every refusal (not 2 and the usage: the command was written right).
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toBe('FORBIDDEN: Operator vic is a viewer; only an admin decides.\n');
    const nobody = await kassa('withdrawal:approve', '--withdrawal', first.withdrawalId, '--operator', 'zed');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/^NOT_FOUND: Operator zed not found; [^\n]*\n$/);
    const done = await ok('withdrawal:approve', '--withdrawal', first.withdrawalId, '--operator', 'bob');
    expect(done).toMatchObject({ status: 'PROCESSING', approvals: 2 });

    const rejected = await ok('withdrawal:reject', '--withdrawal', second.withdrawalId, '--operator', 'bob', '--reason', 'unknown recipient');
    expect(rejected).toMatchObject({ withdrawalId: second.withdrawalId, status: 'REJECTED' });
    const events = await t.db.sql`select reason from events where entity_type = 'withdrawal' and entity_id = ${second.withdrawalId} and to_status = 'REJECTED'`;
    expect(events[0]?.reason).toBe('rejected by bob: unknown recipient');

    // The rejected debit is back in available; the approved one (PROCESSING) is still pending.
    const after = (await ok('balances', '--business', b.businessId)).balances as { currency: string; available: string; pending: string }[];
    const [ledgerAfter] = await sumEntries(t.db.db, b.businessId);
    expect(after).toEqual([{ currency: 'EUR', available: new Dec(ledgerAfter!.amount).toFixed(2), pending: new Dec(first.deductedSettlementAmount).toFixed(2) }]);
    expect(new Dec(after[0]!.available).add(after[0]!.pending).toFixed(2)).toBe('10000.00');

    // The rejection's FAILED callback is in the delivery log, under both names of the command.
    const listed = await ok('deliveries:list', '--business', b.businessId);
    const deliveries = listed.deliveries as { id: string; kind: string; status: string; subjectId: string; attemptLog: unknown[]; body: { status?: string } }[];
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ kind: 'WITHDRAWAL', status: 'PENDING', subjectId: second.withdrawalId, attemptLog: [] });
    expect(deliveries[0]!.body.status).toBe('FAILED');
    expect(await ok('callbacks:list', '--business', b.businessId)).toEqual(listed);
    // For people: a pending delivery shows when its next attempt is due.
    const text = await kassa('deliveries:list', '--business', b.businessId);
    const next = new Date(Number((deliveries[0] as unknown as { nextAttemptAt: number }).nextAttemptAt) * 1000).toISOString().slice(0, 19);
    expect(text.stdout).toContain(`${deliveries[0]!.id} WITHDRAWAL PENDING attempts=0`);
    expect(text.stdout).toContain(` next=${next}`);

    // Redelivery: refused while it is still being retried; after a delivery, a new attempt is queued.
    const busy = await kassa('deliveries:redeliver', '--delivery', deliveries[0]!.id);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/^DELIVERY_IN_PROGRESS: /);
    expect(await attemptDelivery(t.deps, deliveries[0]!.id)).toBe('DELIVERED');
    expect(await ok('deliveries:redeliver', '--delivery', deliveries[0]!.id)).toEqual({ deliveryId: deliveries[0]!.id, status: 'PENDING' });
    expect(await attemptDelivery(t.deps, deliveries[0]!.id)).toBe('DELIVERED');
    const log = (await ok('deliveries:list', '--business', b.businessId, '--status', 'delivered')).deliveries as { createdAt: number; attemptLog: { statusCode: number; startedAt: number }[] }[];
    // Times in UNIX seconds: integers, within the day of the delivery (an ISO string would fail both).
    expect(log[0]!.attemptLog.map((a) => a.statusCode)).toEqual([200, 200]);
    for (const a of log[0]!.attemptLog) expect(Math.abs(a.startedAt - log[0]!.createdAt)).toBeLessThan(24 * 3600);
    expect(receiver.hitsFor('/payouts')).toHaveLength(2);
  });

  it('balances of a business with no ledger entries: its settlement currency at zero, as GET /v1/balances; a bad id exits 2', async () => {
    const b = await t.addBusiness({ name: 'Empty' });
    expect(await ok('balances', '--business', b.businessId)).toEqual({ balances: [{ currency: 'EUR', available: '0.00', pending: '0.00' }] });
    const bad = await kassa('balances', '--business', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^--business <uuid> is required/);
  });
});

describe('compliance:decide', { timeout: 120_000 }, () => {
  async function heldDeposit(): Promise<{ paymentId: string; depositId: string }> {
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: `cli-review-${++seq}`, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
    });
    expect(res.statusCode, res.body).toBe(200);
    const paymentId = res.json().paymentInfo.paymentId as string;
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01', riskScore: '6' });
    expect(sim.statusCode, sim.body).toBe(200);
    expect(sim.json().deposit.status).toBe('COMPLIANCE_REVIEW');
    return { paymentId, depositId: sim.json().deposit.id as string };
  }

  it('block ends the review BLOCKED; approve ends it; deciding again is a conflict', async () => {
    const blocked = await heldDeposit();
    expect(await ok('compliance:decide', '--deposit', blocked.depositId, '--decision', 'block', '--operator', 'ann')).toEqual({
      depositId: blocked.depositId, decision: 'BLOCK', status: 'BLOCKED',
    });
    const approved = await heldDeposit();
    const out = await ok('compliance:decide', '--deposit', approved.depositId, '--decision', 'approve', '--operator', 'bob');
    expect(out.status).not.toBe('COMPLIANCE_REVIEW');
    const record = (await t.signed('GET', `/v1/payments/${approved.paymentId}`)).json() as { deposits: { id: string; status: string }[] };
    expect(record.deposits.find((d) => d.id === approved.depositId)?.status).toBe(out.status);

    const again = await kassa('compliance:decide', '--deposit', approved.depositId, '--decision', 'block', '--operator', 'ann');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^NOT_IN_REVIEW: /);
    const wrong = await kassa('compliance:decide', '--deposit', approved.depositId, '--decision', 'maybe', '--operator', 'ann');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--decision must be approve or block');
  });

  it('compliance:list shows the deposits waiting for a decision, with score and sender; a decided one leaves it', async () => {
    const first = await heldDeposit();
    const second = await heldDeposit();
    const waiting = async () => (await ok('compliance:list', '--business', t.business.businessId)).deposits as { depositId: string; paymentId: string; riskScore: string; amount: string; receivedAt: number }[];
    const before = await waiting();
    expect(before.map((d) => d.depositId)).toEqual(expect.arrayContaining([first.depositId, second.depositId]));
    expect(before.find((d) => d.depositId === first.depositId)).toMatchObject({ paymentId: first.paymentId, riskScore: '6', receivedAt: expect.any(Number) });
    await ok('compliance:decide', '--deposit', first.depositId, '--decision', 'block', '--operator', 'ann');
    const after = await waiting();
    expect(after.map((d) => d.depositId)).not.toContain(first.depositId);
    expect(after.map((d) => d.depositId)).toContain(second.depositId);
    expect((await ok('compliance:list', '--business', crypto.randomUUID())).deposits).toEqual([]);
    expect((await kassa('compliance:list', '--limit', '0')).code).toBe(2);
  });
});

describe('payment:choose-currency and deposit:simulate (sandbox)', { timeout: 120_000 }, () => {
  it("fix a NEW payment's currency, then pay it; the callbacks they cause carry the server's PUBLIC_URL, not the CLI's default", async () => {
    const b = await t.addBusiness({ name: 'Shell', paymentCallbackUrl: 'https://shop.example/kassa' });
    // What a server started with PUBLIC_URL=https://pay.example records; the CLI is given none.
    await t.db.sql`insert into installation (name, value) values ('public_url', 'https://pay.example') on conflict (name) do update set value = excluded.value`;
    const created = await t.signed('POST', '/v1/payments', { clientPaymentId: `shell-${Date.now()}`, businessId: b.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '600.00' }, b);
    const paymentId = created.json().paymentInfo.paymentId as string;
    const chosen = await ok('payment:choose-currency', '--payment', paymentId, '--currency', 'BTC', '--network', 'BTC');
    expect(chosen).toMatchObject({ paymentId, depositCurrency: 'BTC', network: 'BTC', expectedDepositAmount: '0.01' });
    const paid = await ok('deposit:simulate', '--payment', paymentId, '--currency', 'BTC', '--network', 'BTC', '--amount', '0.01');
    expect(paid.transactionId).toEqual(expect.any(String));
    const bodies = await t.db.sql<{ status: string; url: string }[]>`
      select body::jsonb->>'status' as status, body::jsonb->'payment'->>'url' as url from callback_deliveries where subject_id = ${paymentId} order by created_at`;
    expect(bodies.map((d) => d.status)).toEqual(expect.arrayContaining(['PENDING']));
    for (const { url } of bodies) expect(url).toMatch(/^https:\/\/pay\.example\/checkout\/[\w-]+$/);
    await t.db.sql`delete from installation where name = 'public_url'`;
  });
});

describe('operator:list and operator:revoke', { timeout: 120_000 }, () => {
  it("lists operators without tokens; a revoked operator's token is refused from its next request, and its name from decisions", async () => {
    const name = `zed-${Date.now()}`;
    const created = await ok('operator:create', '--name', name, '--role', 'admin');
    const call = (token: string) => t.app.inject({ method: 'GET', url: '/trpc/payments.list?input=%7B%7D', headers: { authorization: `Bearer ${token}` } });
    expect((await call(String(created.token))).statusCode).toBe(200);

    const listed = (await ok('operator:list')).operators as { name: string; role: string; createdAt: number; revokedAt: number | null }[];
    expect(listed.find((o) => o.name === name)).toMatchObject({ role: 'admin', revokedAt: null, createdAt: expect.any(Number) });
    expect(listed.map((o) => o.name)).toEqual(expect.arrayContaining(['ann', 'bob', 'vic', name]));
    expect(JSON.stringify(listed)).not.toContain(String(created.token));

    const revoked = await ok('operator:revoke', '--name', name);
    expect(revoked).toMatchObject({ name, role: 'admin', revokedAt: expect.any(Number) });
    expect((await call(String(created.token))).statusCode).toBe(401);
    const decision = await kassa('withdrawal:approve', '--withdrawal', crypto.randomUUID(), '--operator', name);
    expect(decision.code).toBe(1);
    expect(decision.stderr).toMatch(/^NOT_FOUND: Operator /);
    const again = await kassa('operator:revoke', '--name', name);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^NOT_FOUND: Active operator /);
    // The other operators keep working.
    expect((await ok('operator:list')).operators).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'ann', revokedAt: null })]));
  });
});
