/**
 * Sandbox-only test helpers (CONTRACT §4): simulate a deposit to a payment.
 * Registered only in sandbox, so elsewhere the route answers 404.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { notFound } from '../../platform/errors.js';
import { requireApiKey } from './auth.js';
import { parseInput, UUID_RE } from '../../platform/validate.js';
import { getPayment, loadPayment } from '../../modules/payments/index.js';
import { SimulateDepositSchema } from '../../modules/deposits/index.js';

export function testHelperRoutes(app: FastifyInstance, deps: Deps): void {
  const faucet = deps.faucet;
  if (!deps.config.sandbox || !faucet) return;
  app.post<{ Params: { paymentId: string } }>(
    '/v1/test-helpers/payments/:paymentId/deposits',
    { preHandler: requireApiKey(deps, 'CREATE_PAYMENT') },
    async (request) => {
      const { paymentId } = request.params;
      if (!UUID_RE.test(paymentId)) throw notFound(`Payment ${paymentId} not found.`);
      const businessId = request.caller!.businessId;
      const payment = await loadPayment(deps.database.db, businessId, paymentId.toLowerCase());
      const input = parseInput(SimulateDepositSchema, request.body ?? {}, 'simulated deposit');
      const simulated = await faucet.simulate(deps, payment, input);
      const record = await getPayment(deps, businessId, payment.id);
      const depositId = 'depositId' in simulated.ingest ? simulated.ingest.depositId : null;
      return {
        transactionId: simulated.txHash,
        deposit: record.deposits.find((d) => d.id === depositId) ?? null,
        payment: record,
      };
    },
  );
}
