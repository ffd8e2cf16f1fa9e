/**
 * The OpenAPI document written from the route table (issue 13 item 5): a
 * structural check of OpenAPI 3.1 (written here: no validator package is
 * kept), shown to fail on a broken document; every route documented with
 * every error it can answer; both callbacks under `webhooks`; and every
 * example in /docs accepted by the zod schema of its route.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { restRoutes } from '../../../server/edges/app.js';
import { openApiDocument } from '../../../server/edges/rest/openapi.js';
import { openApiPath, type AnyRoute } from '../../../server/edges/rest/route.js';
import type { Deps } from '../../../server/deps.js';

type Json = Record<string, unknown>;

/** Routes as a sandbox server has them (handlers are not called here). */
function routes(sandbox = true): AnyRoute[] {
  const deps = { config: { sandbox, metricsToken: undefined }, faucet: sandbox ? {} : null } as unknown as Deps;
  return restRoutes(deps, new Registry(), () => ({}));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const TOP_LEVEL = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags', 'externalDocs'];
const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** Problems found in a document against the OpenAPI 3.1 rules this API relies on; [] when none. */
export function openApiProblems(doc: Json): string[] {
  const problems: string[] = [];
  const fail = (where: string, what: string) => problems.push(`${where}: ${what}`);
  for (const key of Object.keys(doc)) if (!TOP_LEVEL.includes(key) && !key.startsWith('x-')) fail('/', `unknown field ${key}`);
  if (!/^3\.1\.\d+$/.test(String(doc.openapi))) fail('/openapi', 'not 3.1.x');
  const info = doc.info as Json | undefined;
  if (typeof info?.title !== 'string' || typeof info?.version !== 'string') fail('/info', 'title and version are required strings');
  if (!doc.paths && !doc.webhooks && !doc.components) fail('/', 'one of paths, webhooks, components is required');
  const schemes = Object.keys(((doc.components as Json | undefined)?.securitySchemes ?? {}) as Json);
  const tags = new Set(((doc.tags ?? []) as { name: string }[]).map((t) => t.name));
  const operationIds = new Set<string>();

  const checkOperation = (where: string, op: Json, pathParams: string[]) => {
    if (typeof op.operationId === 'string') {
      if (operationIds.has(op.operationId)) fail(where, `duplicate operationId ${op.operationId}`);
      operationIds.add(op.operationId);
    }
    for (const tag of (op.tags ?? []) as string[]) if (!tags.has(tag)) fail(where, `tag ${tag} not declared`);
    for (const requirement of (op.security ?? []) as Json[]) {
      for (const name of Object.keys(requirement)) if (!schemes.includes(name)) fail(where, `unknown security scheme ${name}`);
    }
    const params = (op.parameters ?? []) as Json[];
    const seen = new Set<string>();
    for (const p of params) {
      if (typeof p.name !== 'string' || !['query', 'header', 'path', 'cookie'].includes(String(p.in))) fail(where, 'parameter without name or valid in');
      if (!p.schema && !p.content) fail(where, `parameter ${String(p.name)} without schema`);
      if (p.in === 'path' && p.required !== true) fail(where, `path parameter ${String(p.name)} must be required`);
      const key = `${String(p.in)}:${String(p.name)}`;
      if (seen.has(key)) fail(where, `duplicate parameter ${key}`);
      seen.add(key);
    }
    const declared = params.filter((p) => p.in === 'path').map((p) => String(p.name)).sort();
    if (JSON.stringify(declared) !== JSON.stringify([...pathParams].sort())) fail(where, `path parameters ${declared} ≠ template ${pathParams}`);
    const body = op.requestBody as Json | undefined;
    if (body && (!body.content || Object.keys(body.content as Json).length === 0)) fail(where, 'requestBody without content');
    const responses = op.responses as Json | undefined;
    if (!responses || Object.keys(responses).length === 0) fail(where, 'no responses');
    for (const [status, response] of Object.entries(responses ?? {})) {
      if (!/^([1-5](\d\d|XX)|default)$/.test(status)) fail(where, `response key ${status}`);
      if (typeof (response as Json).description !== 'string') fail(`${where} ${status}`, 'response without description');
    }
  };

  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    if (!path.startsWith('/')) fail(path, 'path must start with /');
    const template = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) {
        if (!['summary', 'description', 'parameters', 'servers', '$ref'].includes(method)) fail(path, `unknown field ${method}`);
        continue;
      }
      checkOperation(`${method.toUpperCase()} ${path}`, op as Json, template);
    }
  }
  for (const [name, item] of Object.entries((doc.webhooks ?? {}) as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) checkOperation(`webhook ${name} ${method}`, op as Json, []);
  }

  // Every $ref resolves, and every JSON Schema `type` is one of the seven.
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
    if (node === null || typeof node !== 'object') return;
    const o = node as Json;
    if (typeof o.$ref === 'string') {
      const target = o.$ref.startsWith('#/')
        ? o.$ref.slice(2).split('/').reduce<unknown>((at, part) => (at as Json | undefined)?.[part], doc)
        : undefined;
      if (target === undefined) fail(where, `unresolved $ref ${o.$ref}`);
    }
    if ('type' in o && where.includes('schema')) {
      const types = Array.isArray(o.type) ? o.type : [o.type];
      for (const type of types) if (typeof type === 'string' && !JSON_TYPES.includes(type)) fail(where, `JSON Schema type ${type}`);
    }
    for (const [k, v] of Object.entries(o)) walk(v, `${where}/${k}`);
  };
  walk(doc, '#');
  return problems;
}

describe('the OpenAPI 3.1 document', () => {
  const doc = openApiDocument('https://pay.example', routes());

  it('passes the structural check of OpenAPI 3.1', () => {
    expect(openApiProblems(doc)).toEqual([]);
  });

  it('the check can fail: a broken document is reported', () => {
    const broken = structuredClone(doc) as Json;
    broken.openapi = '3.0.3';
    const paths = broken.paths as Record<string, Record<string, Json>>;
    paths['/v1/payments/{paymentId}']!.get!.parameters = [];
    delete (paths['/v1/payments']!.post!.responses as Json)['200'];
    ((paths['/v1/balances']!.get!.responses as Json)['200'] as Json).description = undefined;
    (paths['/v1/rates']!.get!.responses as Json)['4x'] = { description: 'x' };
    (paths['/health']!.get! as Json).tags = ['Nope'];
    (paths['/v1/currencies']!.get! as Json).responses = { 200: { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Missing' } } } } };
    const problems = openApiProblems(broken);
    expect(problems).toEqual(
      expect.arrayContaining([
        '/openapi: not 3.1.x',
        'GET /v1/payments/{paymentId}: path parameters  ≠ template paymentId',
        'GET /v1/balances 200: response without description',
        'GET /v1/rates: response key 4x',
        'GET /health: tag Nope not declared',
        expect.stringMatching(/unresolved \$ref #\/components\/schemas\/Missing/),
      ]),
    );
  });

  it('documents every route of the table, and only those', () => {
    const table = routes().map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)).sort();
    expect(documented).toEqual(table);
    expect(table).toEqual(
      expect.arrayContaining([
        'GET /v1/balances', 'POST /v1/payments', 'GET /v1/payments/{paymentId}', 'POST /v1/withdrawals', 'GET /v1/currencies', 'GET /v1/rates',
        'POST /api/v1/addresses/validate', 'GET /api/v1/currency/{currency}/network/{network}/address/{address}/valid',
        'POST /v1/test-helpers/payments/{paymentId}/deposits', 'GET /metrics', 'GET /docs', 'GET /openapi.json',
      ]),
    );
    // Outside sandbox the test helpers are neither served nor documented.
    const live = routes(false).map((r) => r.path);
    expect(live.filter((p) => p.includes('test-helpers'))).toEqual([]);
  });

  it('every operation has a 200 schema and its errors, grouped by status, each naming its codes', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) {
        const responses = op.responses as Record<string, Json>;
        const ok = Object.values(responses['200']!.content as Record<string, Json>)[0]!;
        expect(ok.schema, `${method} ${path}`).toBeTypeOf('object');
        expect(responses['500'], `${method} ${path}`).toBeDefined();
        for (const [status, r] of Object.entries(responses)) {
          if (status !== '200') expect(r.description, `${method} ${path} ${status}`).toMatch(/`[A-Z_]+`/);
        }
      }
    }
    const create = (doc.paths as Record<string, Record<string, Json>>)['/v1/payments']!.post!.responses as Record<string, Json>;
    expect(Object.keys(create).sort()).toEqual(['200', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503']);
    expect(create['422']!.description).toContain('AMOUNT_BELOW_MINIMUM');
    expect(create['403']!.description).toContain('FORBIDDEN_SCOPE');
    expect(create['429']!.headers).toHaveProperty('Retry-After');
  });

  it('request bodies refuse unknown fields (additionalProperties: false), as the server does', () => {
    for (const route of routes().filter((r) => r.body)) {
      const op = (doc.paths as Record<string, Record<string, Json>>)[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const schema = ((op.requestBody as Json).content as Record<string, Json>)['application/json']!.schema as Json;
      expect(schema.additionalProperties, `${route.method} ${route.path}`).toBe(false);
    }
  });

  it('the deprecated address validation POST is marked deprecated, with its body', () => {
    const op = (doc.paths as Record<string, Record<string, Json>>)['/api/v1/addresses/validate']!.post!;
    expect(op.deprecated).toBe(true);
    const schema = ((op.requestBody as Json).content as Record<string, Json>)['application/json']!.schema as Json;
    expect(Object.keys(schema.properties as Json).sort()).toEqual(['address', 'currency', 'network']);
  });

  it('both callbacks are under webhooks with their Standard Webhooks headers', () => {
    const webhooks = doc.webhooks as Record<string, { post: Json }>;
    expect(Object.keys(webhooks).sort()).toEqual(['paymentCallback', 'withdrawalCallback']);
    for (const hook of Object.values(webhooks)) {
      expect((hook.post.parameters as Json[]).map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      expect(hook.post.description).toContain('whsec_');
    }
  });

  it('the guide: signing recipe, lockout numbers, raw-body verification for Express and Fastify, no file of Kassa cited', () => {
    const guide = String((doc.info as Json).description);
    expect(guide).toContain("createHmac('sha256', KASSA_API_SECRET)");
    expect(guide).toContain('**20 failures for one key** (from any addresses), its wrongly signed requests are; a correctly signed one still\npasses');
    expect(guide).toContain('**60 failures from one address**');
    expect(guide).toContain("express.raw({ type: 'application/json' })");
    expect(guide).toContain("addContentTypeParser('application/json', { parseAs: 'string' }");
    expect(guide).toContain("from 'standardwebhooks'");
    expect(guide).toContain('`whsec_` followed by base64');
    expect(JSON.stringify(doc)).not.toMatch(/server\/|\.ts\b|README|CONTRACT|[Ss]pec §/);
  });

  it('every example is accepted by the zod schema of its route', () => {
    let checked = 0;
    for (const route of routes()) {
      if (route.example?.request !== undefined) {
        expect(route.body!.safeParse(route.example.request).error, `${route.path} request`).toBeUndefined();
        checked++;
      }
      if (route.example?.response !== undefined) {
        expect(route.response.safeParse(route.example.response).error, `${route.path} response`).toBeUndefined();
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('offers exactly the spec’s fiat currencies (spec §2.1), nothing else', () => {
    const op = (doc.paths as Record<string, Record<string, Json>>)['/v1/payments']!.post!;
    const schema = ((op.requestBody as Json).content as Record<string, Json>)['application/json']!.schema as { properties: Record<string, { enum: string[] }> };
    const SPEC_FIAT =
      'AED, ARS, AUD, BDT, BGN, BRL, CAD, CHF, CLP, CNY, CZK, DKK, EUR, GBP, HKD, HRK, HUF, IDR, ILS, INR, ISK, JPY, KES, KRW, MXN, MYR, NOK, NZD, PEN, PHP, PLN, QAR, RON, SEK, SGD, THB, TRY, USD, VND, ZAR'.split(', ');
    expect([...schema.properties.displayCurrency!.enum].sort()).toEqual(SPEC_FIAT.sort());
  });
});
