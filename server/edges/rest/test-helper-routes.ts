/**
 * Sandbox-only test helpers (CONTRACT §4): simulate a deposit to a payment.
 * Listed only in sandbox, so elsewhere the route answers 404.
 */
import type { Deps } from '../../deps.js';
import { notFound } from '../../platform/errors.js';
import { UUID_RE } from '../../platform/validate.js';
import { getPayment, loadPayment } from '../../modules/payments/index.js';
import { SimulateDepositSchema, SimulatedDepositResponseSchema } from '../../modules/deposits/index.js';
import { PaymentIdParamsSchema } from './payment-routes.js';
import { defineRoute, type AnyRoute } from './route.js';

export function testHelperRoutes(deps: Deps): AnyRoute[] {
  const faucet = deps.faucet;
  if (!deps.config.sandbox || !faucet) return [];
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/test-helpers/payments/:paymentId/deposits',
      operationId: 'sandbox-simulate-deposit',
      tag: 'Sandbox test helpers',
      summary: 'Sandbox: simulate a deposit',
      description: 'Only in sandbox (404 elsewhere). The deposit is seen at once and confirmed after KASSA_SANDBOX_CONFIRM_DELAY_S unless `confirm` is false.',
      auth: 'CREATE_PAYMENT',
      params: PaymentIdParamsSchema,
      body: SimulateDepositSchema,
      response: SimulatedDepositResponseSchema,
      errors: [
        { status: 404, code: 'NOT_FOUND', when: 'no such payment for this business' },
        { status: 422, code: 'PAYMENT_HAS_NO_ADDRESS', when: 'the payment is NEW: its currency and network are not chosen yet' },
        { status: 422, code: 'ADDRESS_NOT_ON_NETWORK', when: "the payment's address cannot receive on that network (a BTC address on ETH); ETH and BSC share addresses" },
      ],
      example: { request: { depositCurrency: 'BTC', network: 'BTC', amount: '0.0012' } },
      handler: async ({ params, body, caller }) => {
        if (!UUID_RE.test(params.paymentId)) throw notFound(`Payment ${params.paymentId} not found.`);
        const payment = await loadPayment(deps.database.db, caller.businessId, params.paymentId.toLowerCase());
        const simulated = await faucet.simulate(deps, payment, body);
        const record = await getPayment(deps, caller.businessId, payment.id);
        const depositId = 'depositId' in simulated.ingest ? simulated.ingest.depositId : null;
        return {
          transactionId: simulated.txHash,
          deposit: record.deposits.find((d) => d.id === depositId) ?? null,
          payment: record,
        };
      },
    }),
  ];
}
