/**
 * GET /v1/payments/:id answers from the process's read cache while the
 * payment, its deposits and their refunds are unchanged (payment-read-cache.ts):
 * a change to any of those rows, however it is made, renders the record
 * afresh; another business and a revoked key are refused as before.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KassaError } from '../../../server/platform/errors.js';
import { StaleCallerError, type CallerProof } from '../../../server/modules/businesses/index.js';
import { cachedPaymentJson, getPayment, PaymentRecordSchema } from '../../../server/modules/payments/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0' } });
});
afterAll(async () => {
  await t?.close();
});

async function btcPayment(): Promise<string> {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `cache-${Math.random()}`, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().paymentInfo.paymentId as string;
}

/** The cached read with a counter of how many times the record was rendered afresh. */
function countingReader(paymentId: string) {
  let renders = 0;
  const read = () =>
    cachedPaymentJson(t.deps, t.business.businessId, paymentId, undefined, () => {
      renders++;
      return getPayment(t.deps, t.business.businessId, paymentId);
    });
  return { read, renders: () => renders };
}

describe('the payment read cache', () => {
  it('renders a repeated read once, and afresh after any change to the payment, a deposit or a refund', async () => {
    const paymentId = await btcPayment();
    const r = countingReader(paymentId);

    const first = await r.read();
    expect(await r.read()).toBe(first);
    expect(r.renders()).toBe(1);
    expect(JSON.parse(first)).toEqual(await getPayment(t.deps, t.business.businessId, paymentId));

    // A deposit arrives: a new deposit row.
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.004' });
    expect(sim.statusCode, sim.body).toBe(200);
    const withDeposit = JSON.parse(await r.read());
    expect(r.renders()).toBe(2);
    expect(withDeposit.deposits).toHaveLength(1);
    expect(withDeposit).toEqual(await getPayment(t.deps, t.business.businessId, paymentId));
    await r.read();
    expect(r.renders()).toBe(2);

    // Changes made behind Kassa's back (an operator's SQL) are seen too: every UPDATE writes a new row version.
    await t.db.db.execute(sql`update deposits set status = status where payment_id = ${paymentId}`);
    await r.read();
    expect(r.renders()).toBe(3);
    await t.db.db.execute(sql`update payments set status = status where id = ${paymentId}`);
    await r.read();
    expect(r.renders()).toBe(4);
    // A refund of the deposit (written here as the deposit module writes one): the record shows it at once.
    const [deposit] = (await t.db.db.execute(sql`select id from deposits where payment_id = ${paymentId}`)) as unknown as [{ id: string }];
    const refundsBefore = (await t.db.db.execute(sql`select count(*)::int as n from refunds where deposit_id = ${deposit.id}`)) as unknown as [{ n: number }];
    expect(refundsBefore[0].n).toBe(0);
    await t.db.db.execute(sql`
      insert into refunds (deposit_id, type, status, reason, deposit_currency, network, to_address, amount, fee, display_currency, display_amount, display_fee)
      select d.id, 'PARTIAL', 'NON_REFUNDABLE', 'OVERPAYMENT', d.deposit_currency, d.network, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', '0.00001', '0.00002', d.display_currency, '0.60', '1.20'
      from deposits d where d.id = ${deposit.id}`);
    const withRefund = JSON.parse(await r.read());
    expect(r.renders()).toBe(5);
    expect(withRefund).toEqual(await getPayment(t.deps, t.business.businessId, paymentId));
    expect(withRefund.deposits[0].refund).toMatchObject({ status: 'NON_REFUNDABLE', reason: 'OVERPAYMENT' });
  });

  it('GET answers the cached text as application/json, the same bytes each time, and the new state right after a change', async () => {
    const paymentId = await btcPayment();
    const a = await t.signed('GET', `/v1/payments/${paymentId}`);
    const b = await t.signed('GET', `/v1/payments/${paymentId}`);
    expect(a.statusCode).toBe(200);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(b.body).toBe(a.body);
    expect(PaymentRecordSchema.parse(a.json()).status).toBe('PENDING');

    const sim = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01' });
    expect(sim.statusCode, sim.body).toBe(200);
    const after = PaymentRecordSchema.parse((await t.signed('GET', `/v1/payments/${paymentId}`)).json());
    expect(after.deposits).toHaveLength(1);
    expect(after).toEqual(PaymentRecordSchema.parse(sim.json().payment));
  });

  it('a payment cached for its business is still 404 to another business', async () => {
    const paymentId = await btcPayment();
    expect((await t.signed('GET', `/v1/payments/${paymentId}`)).statusCode).toBe(200);
    const other = await t.addBusiness({ name: 'Other shop' });
    const res = await t.signed('GET', `/v1/payments/${paymentId}`, undefined, other);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
  });

  it('a key revoked after its read was cached is refused at the next read', async () => {
    const who = await t.addBusiness({ name: 'Revoking shop' });
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'cache-revoke', businessId: who.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
    }, who);
    expect(res.statusCode, res.body).toBe(200);
    const paymentId = res.json().paymentInfo.paymentId as string;
    expect((await t.signed('GET', `/v1/payments/${paymentId}`, undefined, who)).statusCode).toBe(200);
    expect((await t.signed('GET', `/v1/payments/${paymentId}`, undefined, who)).statusCode).toBe(200);

    await t.db.db.execute(sql`update api_keys set revoked_at = now() where key = ${who.apiKey}`);
    const refused = await t.signed('GET', `/v1/payments/${paymentId}`, undefined, who);
    expect(refused.statusCode).toBe(401);
  });

  it('reads asking in one statement each get their own answer: the record, 404 for another business or an unknown id, a stale proof refused', async () => {
    const [mine, alsoMine] = [await btcPayment(), await btcPayment()];
    const other = await t.addBusiness({ name: 'Batch neighbour' });
    const proofOf = async (apiKey: string): Promise<CallerProof> => {
      const [row] = (await t.db.db.execute(sql`select k.id as "apiKeyId", k.xmin::text as "keyVersion", b.xmin::text as "businessVersion"
        from api_keys k join businesses b on b.id = k.business_id where k.key = ${apiKey}`)) as unknown as [CallerProof];
      return row;
    };
    const proof = await proofOf(t.business.apiKey);
    const read = (businessId: string, paymentId: string, with_: CallerProof | undefined) =>
      cachedPaymentJson(t.deps, businessId, paymentId, with_, () => getPayment(t.deps, businessId, paymentId)).then(
        (json) => JSON.parse(json).paymentId as string,
        (error: Error) => (error instanceof StaleCallerError ? 'stale' : error instanceof KassaError ? error.code : error.message),
      );
    // Called in one turn: one batch.
    const answers = await Promise.all([
      read(t.business.businessId, mine, proof),
      read(other.businessId, mine, await proofOf(other.apiKey)),
      read(t.business.businessId, mine, { ...proof, keyVersion: '1' }),
      read(t.business.businessId, '00000000-0000-4000-8000-000000000000', proof),
      read(t.business.businessId, alsoMine, undefined),
    ]);
    expect(answers).toEqual([mine, 'NOT_FOUND', 'stale', 'NOT_FOUND', alsoMine]);
  });
});
