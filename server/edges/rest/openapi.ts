/**
 * The OpenAPI 3.1 document (GET /openapi.json), generated from the same zod
 * schemas that validate requests and describe responses, and a plain HTML
 * reference rendered from it (GET /docs) that needs no CDN.
 */
import { z } from 'zod';
import { CreatePaymentSchema } from '../../modules/payments/index.js';
import { CreatedPaymentResponseSchema, PaymentListSchema, PaymentRecordSchema } from '../../modules/payments/index.js';
import { ListPaymentsQuerySchema } from './payment-routes.js';
import { SimulateDepositSchema } from '../../modules/deposits/index.js';
import { RatesQuerySchema } from './metadata-routes.js';
import { CreateWithdrawalSchema } from '../../modules/withdrawals/index.js';
import { CreateWhitelistSchema, WithdrawalListSchema, WithdrawalRecordSchema } from '../../modules/withdrawals/index.js';
import { PaymentCallbackSchema, WithdrawalCallbackSchema } from '../../modules/callbacks/index.js';
import { ListWithdrawalsQuerySchema, OutcomeSchema } from './withdrawal-routes.js';

type Operation = {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  scope?: string;
  request?: z.ZodType;
  query?: z.ZodObject;
  response?: z.ZodType;
  pathParams?: string[];
};

/** Every documented operation; feature issues add theirs here. */
export const OPERATIONS: Operation[] = [
  { method: 'post', path: '/v1/payments', summary: 'Request crypto payment (spec §4.1)', scope: 'CREATE_PAYMENT', request: CreatePaymentSchema, response: CreatedPaymentResponseSchema },
  { method: 'get', path: '/v1/payments/{paymentId}', summary: 'Get a payment record', scope: 'READ_PAYMENT', pathParams: ['paymentId'], response: PaymentRecordSchema },
  { method: 'get', path: '/v1/payments', summary: 'List payments, newest first', scope: 'READ_PAYMENT', query: ListPaymentsQuerySchema, response: PaymentListSchema },
  { method: 'post', path: '/v1/withdrawals', summary: 'Request a withdrawal (CONTRACT §6)', scope: 'CREATE_WITHDRAWAL', request: CreateWithdrawalSchema, response: WithdrawalRecordSchema },
  { method: 'get', path: '/v1/withdrawals/{withdrawalId}', summary: 'Get a withdrawal', scope: 'READ_WITHDRAWAL', pathParams: ['withdrawalId'], response: WithdrawalRecordSchema },
  { method: 'get', path: '/v1/withdrawals', summary: 'Business withdrawals, newest first', scope: 'READ_WITHDRAWAL', query: ListWithdrawalsQuerySchema, response: WithdrawalListSchema },
  { method: 'post', path: '/v1/whitelisted-addresses', summary: 'Whitelist a withdrawal address (network mandatory)', scope: 'MANAGE_WHITELIST', request: CreateWhitelistSchema },
  { method: 'get', path: '/v1/whitelisted-addresses', summary: 'List whitelisted addresses', scope: 'MANAGE_WHITELIST' },
  { method: 'delete', path: '/v1/whitelisted-addresses/{id}', summary: 'Remove a whitelisted address', scope: 'MANAGE_WHITELIST', pathParams: ['id'] },
  { method: 'get', path: '/v1/currencies', summary: 'Currencies, networks, decimals, deposit/withdraw flags, minAmount, maxAmount', scope: 'any' },
  { method: 'get', path: '/v1/rates', summary: 'Exchange rates: from and to are comma-separated fiat and crypto codes', scope: 'any', query: RatesQuerySchema },
  { method: 'get', path: '/api/v1/currency/{currency}/network/{network}/address/{address}/valid', summary: 'Validate a withdrawal address', scope: 'any', pathParams: ['currency', 'network', 'address'] },
  { method: 'post', path: '/api/v1/addresses/validate', summary: 'Deprecated: validate an address (body {currency, network, address})', scope: 'any' },
  { method: 'post', path: '/v1/test-helpers/payments/{paymentId}/deposits', summary: 'Sandbox: simulate a deposit', scope: 'CREATE_PAYMENT', pathParams: ['paymentId'], request: SimulateDepositSchema },
  { method: 'post', path: '/v1/test-helpers/withdrawals/{withdrawalId}/outcome', summary: 'Sandbox: force a withdrawal outcome', scope: 'CREATE_WITHDRAWAL', pathParams: ['withdrawalId'], request: OutcomeSchema, response: WithdrawalRecordSchema },
  { method: 'get', path: '/health', summary: 'Liveness' },
  { method: 'get', path: '/ready', summary: 'Readiness: the database answers' },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics' },
];

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'errors'],
  properties: {
    type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' },
    code: { type: 'string', description: 'Stable UPPER_SNAKE identifier' },
    errors: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
};

/** The errors every authenticated operation can answer, besides its own 400/404/409/422 (all problem+json). */
const PROBLEM_RESPONSE = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
const ERRORS: Record<string, string> = {
  400: 'Malformed request (VALIDATION_FAILED, naming each field)',
  401: 'Missing or bad signature, unknown key',
  403: 'Key lacks the scope, or another business',
  404: 'Not found',
  409: 'Conflict (idempotency, a final status, a concurrent change)',
  422: 'A business rule refused it (its own code)',
  429: 'Rate limited (Retry-After)',
};

function webhook(summary: string, body: z.ZodType) {
  return {
    post: {
      summary,
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(body, 'output') } } },
      responses: { '2XX': { description: 'Delivered; anything else (or no answer in time) is retried until the retry window ends' } },
    },
  };
}

export function openApiDocument(publicUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const parameters = [
      ...(op.pathParams ?? []).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...(op.query
        ? Object.entries((jsonSchema(op.query, 'input').properties ?? {}) as Record<string, unknown>).map(([name, schema]) => ({ name, in: 'query', required: false, schema }))
        : []),
    ];
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      summary: op.summary,
      ...(op.scope
        ? { security: [{ kassaApi: op.scope === 'any' ? [] : [op.scope] }], description: op.scope === 'any' ? 'Any valid API key.' : `Requires scope ${op.scope}.` }
        : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(op.request ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.request, 'input') } } } } : {}),
      responses: {
        200: { description: 'OK', ...(op.response ? { content: { 'application/json': { schema: jsonSchema(op.response, 'output') } } } : {}) },
        ...(op.scope ? Object.fromEntries(Object.entries(ERRORS).map(([code, description]) => [code, { description, ...PROBLEM_RESPONSE }])) : {}),
        default: { description: 'Problem (RFC 9457)', ...PROBLEM_RESPONSE },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Kassa API', version: '1.0.0', description: 'Crypto payment requests, deposits, refunds and withdrawals.' },
    servers: [{ url: publicUrl }],
    components: {
      securitySchemes: {
        kassaApi: {
          type: 'apiKey', in: 'header', name: 'Authorization',
          description: 'KASSA-API api-key=<key>,signature=<hex HMAC-SHA256 of "timestamp\\nMETHOD\\npath?query\\nbody">,timestamp=<unix seconds>',
        },
      },
      schemas: { Problem: PROBLEM_SCHEMA },
    },
    paths,
    // The two callbacks Kassa POSTs, signed with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).
    webhooks: {
      withdrawalCallback: webhook('A withdrawal ended (COMPLETED, FAILED or BLOCKED): sent to the business withdrawalCallbackUrl.', WithdrawalCallbackSchema),
      paymentCallback: webhook('A payment changed status: sent to the business paymentCallbackUrl.', PaymentCallbackSchema),
    },
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained HTML reference of the document. */
export function renderDocs(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, { summary: string; description?: string; requestBody?: unknown; parameters?: unknown; responses: Record<string, unknown> }>>;
  const sections = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const block = (title: string, value: unknown) =>
        value ? `<details><summary>${title}</summary><pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre></details>` : '';
      return `<section id="${escapeHtml(method + path)}"><h2><code class="m">${method.toUpperCase()}</code> <code>${escapeHtml(path)}</code></h2>
<p>${escapeHtml(op.summary)}${op.description ? ` — ${escapeHtml(op.description)}` : ''}</p>
${block('Parameters', op.parameters)}${block('Request body', op.requestBody)}${block('Response 200', op.responses['200'])}</section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Kassa API reference</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code.m{background:#0b5cad;color:#fff;padding:0 .4em;border-radius:4px}pre{background:#f4f4f6;padding:1rem;overflow:auto;font-size:13px}
section{border-top:1px solid #ddd;padding-top:.5rem}</style></head><body><h1>Kassa API reference</h1>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Authentication: <code>${escapeHtml(String((doc.components as { securitySchemes: { kassaApi: { description: string } } }).securitySchemes.kassaApi.description))}</code>. Errors are <code>application/problem+json</code>.</p>
${sections.join('\n')}</body></html>`;
}
