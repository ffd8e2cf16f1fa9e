/**
 * The OpenAPI 3.1 document (GET /openapi.json), written from the route table
 * (route.ts): every operation with its parameters, body, 200 answer, every
 * error it can answer, and both callbacks under `webhooks`. JSON Schemas
 * come from the same zod schemas that validate requests (zod 4's
 * `z.toJSONSchema`, draft 2020-12, which is OpenAPI 3.1's dialect).
 */
import { z } from 'zod';
import { PaymentCallbackSchema, WithdrawalCallbackSchema } from '../../modules/callbacks/index.js';
import { API_GUIDE, WEBHOOK_NOTE } from './docs-guide.js';
import { openApiPath, type AnyRoute, type ErrorCase } from './route.js';

export const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
};

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'errors'],
  additionalProperties: false,
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What went wrong and what to do, for a human' },
    code: { type: 'string', description: 'Stable UPPER_SNAKE identifier: branch on this' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['field', 'message'], additionalProperties: false, properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** The refusals every route of its kind can answer, besides its own. */
export function commonErrors(route: AnyRoute): ErrorCase[] {
  const errors: ErrorCase[] = [];
  const hasInput = Boolean(route.params || route.query || route.body) || route.method === 'GET';
  if (hasInput) errors.push({ status: 400, code: 'VALIDATION_FAILED', when: 'a field is invalid or unknown (one errors[] entry per field)' });
  if (route.body) {
    errors.push(
      { status: 400, code: 'MALFORMED_JSON', when: 'the body is not valid JSON' },
      { status: 413, code: 'PAYLOAD_TOO_LARGE', when: 'the body is over 64 KiB' },
      { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', when: 'the body is not application/json' },
    );
  }
  if (route.auth !== 'NONE') {
    errors.push(
      { status: 401, code: 'UNAUTHORIZED', when: 'missing or malformed header, timestamp off by more than 300 s or in milliseconds, unknown or revoked key, wrong signature' },
      { status: 429, code: 'RATE_LIMITED', when: 'locked out after repeated failed authentications (Retry-After)' },
    );
  }
  if (route.auth !== 'NONE' && route.auth !== 'ANY_KEY') {
    errors.push({ status: 403, code: 'FORBIDDEN_SCOPE', when: `the API key lacks the ${route.auth} scope` });
  }
  errors.push({ status: 500, code: 'INTERNAL_ERROR', when: 'an unexpected failure (logged; no details are sent)' });
  errors.push({ status: 503, code: 'SERVICE_UNAVAILABLE', when: 'the database is unreachable (Retry-After)' });
  return errors;
}

/** Every error case of a route, grouped by status: one response per status listing its codes. */
function errorResponses(route: AnyRoute): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCase[]>();
  for (const e of [...commonErrors(route), ...(route.errors ?? [])]) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e]);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, cases]) => [
        String(status),
        {
          description: cases.map((c) => `\`${c.code}\`: ${c.when}`).join('; '),
          ...(cases.some((c) => c.when.includes('Retry-After')) ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } } : {}),
          content: problemContent,
        },
      ]),
  );
}

function parameters(route: AnyRoute): unknown[] {
  const of = (schema: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!schema) return [];
    const js = jsonSchema(schema, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    return Object.entries(js.properties ?? {}).map(([name, s]) => {
      const { description, ...rest } = s;
      return { name, in: where, required: where === 'path' || (js.required ?? []).includes(name), ...(description ? { description } : {}), schema: rest };
    });
  };
  return [...of(route.params, 'path'), ...of(route.query, 'query')];
}

function operation(route: AnyRoute): Record<string, unknown> {
  const params = parameters(route);
  const json = (schema: z.ZodType, io: 'input' | 'output', example: unknown) => ({
    schema: jsonSchema(schema, io),
    ...(example === undefined ? {} : { example }),
  });
  const scope = route.auth === 'NONE' ? 'No authentication.' : route.auth === 'ANY_KEY' ? 'Any valid API key.' : `Requires the ${route.auth} scope.`;
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: [scope, route.description].filter(Boolean).join('\n\n'),
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(route.auth === 'NONE' ? { security: [] } : { security: [{ kassaApi: route.auth === 'ANY_KEY' ? [] : [route.auth] }] }),
    ...(params.length ? { parameters: params } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': json(route.body, 'input', route.example?.request) } } } : {}),
    responses: {
      200: {
        description: 'OK',
        ...(route.responseHeaders
          ? { headers: Object.fromEntries(Object.entries(route.responseHeaders).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) }
          : {}),
        content: { [route.responseType ?? 'application/json']: json(route.response, 'output', route.example?.response) },
      },
      ...errorResponses(route),
    },
  };
}

function webhook(operationId: string, summary: string, body: z.ZodType) {
  return {
    post: {
      operationId,
      summary,
      description: WEBHOOK_NOTE,
      parameters: [
        { name: 'webhook-id', in: 'header', required: true, description: 'Message id, the same on every retry', schema: { type: 'string' } },
        { name: 'webhook-timestamp', in: 'header', required: true, description: 'UNIX seconds of this attempt', schema: { type: 'string' } },
        { name: 'webhook-signature', in: 'header', required: true, description: 'v1,<base64>, space-separated when several', schema: { type: 'string' } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(body, 'output') } } },
      responses: { '2XX': { description: 'Delivered; anything else (or no answer in time) is retried until the retry window ends' } },
    },
  };
}

export function openApiDocument(publicUrl: string, routes: readonly AnyRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Kassa API', version: '1.0.0', description: API_GUIDE },
    servers: [{ url: publicUrl }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    components: {
      securitySchemes: {
        kassaApi: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'KASSA-API api-key=<key>,signature=<hex HMAC-SHA256 of "timestamp\\nMETHOD\\npath?query\\nbody">,timestamp=<UNIX seconds>',
        },
      },
      schemas: { Problem: PROBLEM_SCHEMA },
    },
    paths,
    webhooks: {
      withdrawalCallback: webhook('withdrawal-callback', 'A withdrawal ended (COMPLETED, FAILED or BLOCKED): POSTed to the business’s withdrawalCallbackUrl', WithdrawalCallbackSchema),
      paymentCallback: webhook('payment-callback', 'A payment changed status: POSTed to the business’s paymentCallbackUrl', PaymentCallbackSchema),
    },
  };
}
