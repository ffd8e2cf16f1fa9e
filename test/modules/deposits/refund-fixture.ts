/** A sandbox payment refunded in full (ETH paid to a USDT payment), its deposit confirmed: the refund's id, ready to send. */
import { expect } from 'vitest';
import { settleSandboxTx } from '../../../server/adapters/chain/sandbox-faucet.js';
import type { TestApp } from '../../helpers/app.js';

export async function mismatchRefund(t: TestApp, clientPaymentId: string): Promise<{ paymentId: string; refundId: string }> {
  const created = await t.signed('POST', '/v1/payments', {
    clientPaymentId, businessId: t.business.businessId, locale: 'en', depositCurrency: 'USDT', depositAmount: '100', network: 'ETH',
  });
  expect(created.statusCode, created.body).toBe(200);
  const paymentId = created.json().paymentInfo.paymentId as string;
  // ETH to a USDT payment: refunded in full once the deposit confirms
  const sim = await t.signed('POST', `/v1/test-helpers/payments/${paymentId}/deposits`, { depositCurrency: 'ETH', network: 'ETH', amount: '0.01' });
  expect(sim.statusCode, sim.body).toBe(200);
  // the sandbox chain's block: the deposit confirms, so its refund may be sent
  const [tx] = await t.db.sql<{ id: string }[]>`select id from sandbox_transactions where tx_hash = ${sim.json().transactionId as string}`;
  await settleSandboxTx(t.deps, tx!.id);
  const [refund] = await t.db.sql<{ id: string }[]>`select r.id from refunds r join deposits d on d.id = r.deposit_id where d.payment_id = ${paymentId}`;
  return { paymentId, refundId: refund!.id };
}
