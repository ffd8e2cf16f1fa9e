import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentRecordSchema } from '../../server/payments/payment-record.schema.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { eventually, startTestWorker } from '../helpers/worker.js';

let t: TestApp;
let worker: Runner;
beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0' } });
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

async function btcPayment(amount = '0.01', extra: Record<string, unknown> = {}) {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `p-${Math.random()}`, businessId: t.business.businessId, locale: 'en',
    depositCurrency: 'BTC', depositAmount: amount, network: 'BTC', ...extra,
  });
  expect(res.statusCode).toBe(200);
  return res.json().paymentInfo as { paymentId: string };
}

const get = async (id: string) => PaymentRecordSchema.parse((await t.signed('GET', `/v1/payments/${id}`)).json());

describe('a BTC payment paid exactly', () => {
  it('goes PENDING → AWAITING → DEPOSITED with the deposit credited', async () => {
    const p = await btcPayment();
    const sim = await t.signed('POST', `/v1/test-helpers/payments/${p.paymentId}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: '0.01' });
    expect(sim.statusCode).toBe(200);
    const done = await eventually(async () => {
      const r = await get(p.paymentId);
      return r.status === 'DEPOSITED' ? r : null;
    }, 10_000, 'DEPOSITED');
    expect(done.deposits).toHaveLength(1);
    const d = done.deposits[0]!;
    expect(d.status).toBe('CONFIRMED');
    // 0.01 BTC × 60000 EUR = 600.00 EUR; F = 1 %, U = 0: fee 6.00, payable 594.00
    expect(d.displayAmount).toBe('600.00');
    expect(d.displayServiceFee).toBe('6.00');
    expect(d.displayPayableAmount).toBe('594.00');
    expect(done.actualDepositAmount).toBe('0.01');
    expect(done.actualDisplayAmount).toBe('600.00');
  });
});
