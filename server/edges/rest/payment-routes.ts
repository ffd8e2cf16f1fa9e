/** REST routes of payments (CONTRACT §4), as route-table entries: parse, call one service function, answer. */
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { notFound } from '../../platform/errors.js';
import { UUID_RE } from '../../platform/validate.js';
import {
  CreatedPaymentResponseSchema, CreatePaymentSchema, ListPaymentsQuerySchema, PaymentListSchema, PaymentRecordSchema,
  createPayment, getPaymentJson, listPayments,
} from '../../modules/payments/index.js';
import { SHARED_ERRORS, defineRoute, type AnyRoute, type ErrorCase } from './route.js';
import { EXAMPLE_PAYMENT_ID, examplePayment, examplePaymentRequest } from './examples.js';

export const PaymentIdParamsSchema = z.strictObject({ paymentId: z.string().describe('The paymentId (UUID) of the payment record') });

/** Refusals of a payment creation besides authentication and shape. */
const CREATE_ERRORS: readonly ErrorCase[] = [
  SHARED_ERRORS.forbiddenBusiness,
  SHARED_ERRORS.idempotency('clientPaymentId'),
  { status: 422, code: 'NETWORK_NOT_ALLOWED', when: 'the business does not accept this currency on this network' },
  SHARED_ERRORS.networkNotEnabled,
  SHARED_ERRORS.networkUnavailable,
  { status: 422, code: 'AMOUNT_BELOW_MINIMUM', when: 'depositAmount is below minAmount of the pair (GET /v1/currencies)' },
  SHARED_ERRORS.ratesUnavailable,
];

export function paymentRoutes(deps: Deps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/payments',
      operationId: 'request-crypto-payment',
      tag: 'Payments',
      summary: 'Request a crypto payment',
      description:
        'Give the amount in fiat (`displayCurrency` + `displayAmount`: the customer picks currency and network in the checkout) ' +
        'or in crypto (`depositCurrency` + `depositAmount` + `network`). Repeating the same body with the same `clientPaymentId` returns ' +
        'the original payment (200); a different body is 409 IDEMPOTENCY_CONFLICT. Unknown fields are refused (400, one entry per field).',
      auth: 'CREATE_PAYMENT',
      confirmsCaller: true,
      body: CreatePaymentSchema,
      response: CreatedPaymentResponseSchema,
      errors: CREATE_ERRORS,
      example: { request: examplePaymentRequest, response: { paymentInfo: examplePayment, paymentUrl: examplePayment.url } },
      handler: async ({ body, caller }) => {
        const { record } = await createPayment(deps, caller, body);
        return { paymentInfo: record, paymentUrl: record.url };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/payments/:paymentId',
      operationId: 'get-payment',
      tag: 'Payments',
      summary: 'Get a payment record',
      description: 'The payment record with its deposits and their refunds.',
      auth: 'READ_PAYMENT',
      confirmsCaller: true,
      params: PaymentIdParamsSchema,
      response: PaymentRecordSchema,
      errors: [{ status: 404, code: 'NOT_FOUND', when: 'no payment with this id for this business; a path without an id (GET /v1/payments/) says so' }],
      example: { response: examplePayment },
      handler: async ({ params, caller, reply }) => {
        if (!UUID_RE.test(params.paymentId)) throw notFound(`No payment ${params.paymentId}: a paymentId is a UUID such as ${EXAMPLE_PAYMENT_ID}.`);
        // Already JSON (the read cache keeps the text): sent as it is.
        reply.type('application/json; charset=utf-8');
        return getPaymentJson(deps, caller.businessId, params.paymentId.toLowerCase(), caller.proof);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/payments',
      operationId: 'list-payments',
      tag: 'Payments',
      summary: 'List payments, newest first',
      description: 'Keyset pages: pass `nextCursor` as `cursor` for the next page; `nextCursor` is null on the last one.',
      auth: 'READ_PAYMENT',
      query: ListPaymentsQuerySchema,
      response: PaymentListSchema,
      example: { response: { items: [examplePayment], nextCursor: null } },
      handler: async ({ query, caller }) => listPayments(deps, caller.businessId, query),
    }),
  ];
}
