/** REST routes of payments (CONTRACT §4): parse, call one service function, answer. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { notFound } from '../../platform/errors.js';
import { requireApiKey } from './auth.js';
import { parseInput, UUID_RE } from '../../platform/validate.js';
import { PAYMENT_STATUSES } from '../../modules/money/index.js';
import { CreatePaymentSchema } from '../../modules/payments/index.js';
import { createPayment, getPayment, listPayments } from '../../modules/payments/index.js';

export const ListPaymentsQuerySchema = z.object({
  clientPaymentId: z.string().min(1).max(255).regex(/^[^\p{Cc}]+$/u, 'must not contain control characters').optional(),
  status: z.enum(PAYMENT_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(200).optional(),
});

export function paymentRoutes(app: FastifyInstance, deps: Deps): void {
  app.post('/v1/payments', { preHandler: requireApiKey(deps, 'CREATE_PAYMENT') }, async (request) => {
    const input = parseInput(CreatePaymentSchema, request.body, 'payment request');
    const { record } = await createPayment(deps, request.caller!, input);
    return { paymentInfo: record, paymentUrl: record.url };
  });

  app.get<{ Params: { paymentId: string } }>(
    '/v1/payments/:paymentId',
    { preHandler: requireApiKey(deps, 'READ_PAYMENT') },
    async (request) => {
      const { paymentId } = request.params;
      if (!UUID_RE.test(paymentId)) throw notFound(`Payment ${paymentId} not found.`);
      return getPayment(deps, request.caller!.businessId, paymentId.toLowerCase());
    },
  );

  app.get('/v1/payments', { preHandler: requireApiKey(deps, 'READ_PAYMENT') }, async (request) => {
    const query = parseInput(ListPaymentsQuerySchema, request.query, 'query');
    return listPayments(deps, request.caller!.businessId, query);
  });
}
