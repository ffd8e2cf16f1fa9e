/**
 * The HTTP edge (CONTRACT §3, §4): media type, body size, malformed and
 * hostile JSON, the problem+json shape of every refusal (never a 5xx, a
 * stack trace or SQL), and the operational endpoints /health, /ready,
 * /metrics, /openapi.json and /docs.
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationHeader } from '../../../server/edges/rest/signature.rules.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

// ---------------------------------------------------------------------------
// Local helpers

const KIB = 1024;
const PROBLEM_KEYS = ['code', 'detail', 'errors', 'status', 'title', 'type'];

/** Every response of this file, checked for leaks at the end. */
const seen: LightMyRequestResponse[] = [];

/** A signed POST /v1/payments with a raw body and any content type. */
async function post(rawBody: string, contentType = 'application/json', path = '/v1/payments'): Promise<LightMyRequestResponse> {
  const res = await t.app.inject({
    method: 'POST',
    url: path,
    payload: rawBody,
    headers: {
      'content-type': contentType,
      authorization: authorizationHeader(t.business.apiKey, t.business.apiSecret, {
        method: 'POST',
        path,
        body: rawBody,
        timestamp: Math.floor(t.clock.now().getTime() / 1000),
      }),
    },
  });
  seen.push(res);
  return res;
}

async function get(path: string): Promise<LightMyRequestResponse> {
  const res = await t.app.inject({ method: 'GET', url: path });
  seen.push(res);
  return res;
}

const paymentBody = (overrides: Record<string, unknown> = {}) => ({
  clientPaymentId: `edge-${randomUUID()}`,
  businessId: t.business.businessId,
  locale: 'en',
  displayCurrency: 'EUR',
  displayAmount: '12.00',
  ...overrides,
});

/** A JSON payment body padded (with an ignored extra key) to exactly `bytes` bytes. */
function bodyOfSize(bytes: number): string {
  // Padded with JSON whitespace: an extra field would be refused as unknown (CONTRACT §3), spaces are valid JSON.
  const base = JSON.stringify(paymentBody());
  const padded = `${base.slice(0, -1)}${' '.repeat(bytes - base.length)}}`;
  expect(Buffer.byteLength(padded)).toBe(bytes);
  return padded;
}

function expectNoLeak(res: LightMyRequestResponse) {
  expect(res.body, 'stack frame').not.toMatch(/\n\s*at |\bat .+:\d+:\d+/);
  expect(res.body, 'SQL').not.toMatch(/SELECT|INSERT/);
}

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
  expect(body.status).toBe(res.statusCode);
  expect(body.code).toBe(code);
  expect(body.type).toEqual(expect.any(String));
  expect(body.title).toEqual(expect.any(String));
  expect(body.detail).toEqual(expect.any(String));
  expect(Array.isArray(body.errors)).toBe(true);
  expectNoLeak(res);
  return body as { errors: { field: string; message: string }[] };
}

/** Any 4xx, as problem+json of the right shape. */
function expectClientError(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body).toBeLessThan(500);
  return expectProblem(res, res.statusCode, res.json().code);
}

async function paymentCount(): Promise<number> {
  const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from payments`;
  return row!.n;
}

// ---------------------------------------------------------------------------

describe('content type: only JSON (415 UNSUPPORTED_MEDIA_TYPE)', () => {
  it('accepts application/json, with or without a charset', async () => {
    expect((await post(JSON.stringify(paymentBody()))).statusCode).toBe(200);
    expect((await post(JSON.stringify(paymentBody()), 'application/json; charset=utf-8')).statusCode).toBe(200);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'refuses %s',
    async (contentType) => {
      const before = await paymentCount();
      expectProblem(await post(JSON.stringify(paymentBody()), contentType), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(await paymentCount()).toBe(before);
    },
  );

  it('refuses a form-encoded body', async () => {
    expectProblem(await post('clientPaymentId=a&locale=en', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('body size: at most 64 KiB (413 PAYLOAD_TOO_LARGE)', () => {
  it('accepts a body of exactly 64 KiB', async () => {
    const res = await post(bodyOfSize(64 * KIB));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses a body one byte over 64 KiB', async () => {
    expectProblem(await post(bodyOfSize(64 * KIB + 1)), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a 300 KB clientPaymentId', async () => {
    expectProblem(await post(JSON.stringify(paymentBody({ clientPaymentId: 'x'.repeat(300_000) }))), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a large body even without a valid signature', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/payments', payload: bodyOfSize(100 * KIB), headers: { 'content-type': 'application/json' } });
    seen.push(res);
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('malformed JSON (400 MALFORMED_JSON)', () => {
  it.each(['{"clientPaymentId": ', "{'a': 1}", '{"a": 1,}', 'not json', '{"a": 1} trailing', '\u0000'])(
    'refuses %j',
    async (raw) => {
      expectProblem(await post(raw), 400, 'MALFORMED_JSON');
    },
  );

  it('refuses an empty body declared as JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: '',
      headers: { 'content-type': 'application/json', authorization: authorizationHeader(t.business.apiKey, t.business.apiSecret, { method: 'POST', path: '/v1/payments', body: '', timestamp: Math.floor(t.clock.now().getTime() / 1000) }) },
    });
    seen.push(res);
    expectProblem(res, 400, 'MALFORMED_JSON');
  });
});

describe('prototype pollution attempts → 400 naming the key as unknown (CONTRACT §3), never 5xx', () => {
  it.each<[string, () => string, string]>([
    ['__proto__', () => '{"__proto__": {"polluted": true}}', '__proto__'],
    ['constructor.prototype', () => '{"constructor": {"prototype": {"polluted": true}}}', 'constructor'],
    ['__proto__ inside a valid payment', () => JSON.stringify(paymentBody()).replace(/}$/, ',"__proto__":{"polluted":true}}'), '__proto__'],
    ['nested __proto__', () => JSON.stringify({ ...paymentBody(), meta: { a: 1 } }).replace('"a":1', '"__proto__":{"polluted":true}'), '__proto__'],
  ])('refuses %s', async (_what, raw, key) => {
    const before = await paymentCount();
    const problem = expectProblem(await post(raw()), 400, 'VALIDATION_FAILED');
    expect(problem.errors).toEqual([{ field: key, message: expect.stringContaining('unknown field') }]);
    expect(await paymentCount()).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('a key given twice in one object → 400 naming it, nothing created', () => {
  it.each<[string, () => string, string]>([
    ['a second displayAmount', () => JSON.stringify(paymentBody({ displayAmount: '1.00' })).replace(/}$/, ',"displayAmount":"1000.00"}'), 'displayAmount'],
    ['the same key spelled with an escape', () => JSON.stringify(paymentBody()).replace(/}$/, ',"\\u006cocale":"en"}'), 'locale'],
  ])('refuses %s', async (_what, raw, key) => {
    const before = await paymentCount();
    const problem = expectProblem(await post(raw()), 400, 'VALIDATION_FAILED');
    expect(problem.errors).toEqual([{ field: key, message: 'given twice in one object: send each key once' }]);
    expect(await paymentCount()).toBe(before);
  });
});

describe('JSON that is not an object (400 VALIDATION_FAILED)', () => {
  it.each([
    ['an array', '[]'],
    ['an array of a payment', JSON.stringify([{ clientPaymentId: 'x' }])],
    ['a string', '"hello"'],
    ['null', 'null'],
    ['a number', '42'],
    ['a boolean', 'true'],
  ])('refuses %s', async (_what, raw) => {
    const problem = expectProblem(await post(raw), 400, 'VALIDATION_FAILED');
    expect(problem.errors.map((e) => e.field)).toEqual(['(body)']);
  });

  it('accepts an object of the right shape', async () => {
    expect((await post(JSON.stringify(paymentBody()))).statusCode).toBe(200);
  });
});

describe('hostile shapes → 4xx, never 5xx', () => {
  const depth = 5000;
  const nestedArrays = '['.repeat(depth) + ']'.repeat(depth);
  const nestedObjects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  /** A valid payment body whose `field` holds raw JSON text. */
  const withRaw = (field: string, rawValue: string) =>
    JSON.stringify(paymentBody({ [field]: 'PLACEHOLDER' })).replace('"PLACEHOLDER"', rawValue);

  it.each<[string, () => string]>([
    ['5000 nested arrays as the body', () => nestedArrays],
    ['5000 nested objects as the body', () => nestedObjects],
    ['5000 nested arrays as clientPaymentId', () => withRaw('clientPaymentId', nestedArrays)],
    ['5000 nested objects as displayAmount', () => withRaw('displayAmount', nestedObjects)],
    ['a NUL character in clientPaymentId', () => JSON.stringify(paymentBody({ clientPaymentId: 'a\u0000b' }))],
    ['a lone surrogate in locale', () => withRaw('locale', '"en-\\ud800"')],
    ['a NUL character in locale', () => JSON.stringify(paymentBody({ locale: 'en\u0000' }))],
    ['a huge number as expirationMinutes', () => withRaw('expirationMinutes', '1e308')],
    ['an amount with 60 digits', () => JSON.stringify(paymentBody({ displayAmount: '9'.repeat(60) }))],
    ['a businessId that is almost a UUID', () => JSON.stringify(paymentBody({ businessId: `${t.business.businessId}0` }))],
    ['a 10 000-character locale', () => JSON.stringify(paymentBody({ locale: `en-${'a'.repeat(10_000)}` }))],
    ['an object as businessId', () => JSON.stringify(paymentBody({ businessId: { $ne: null } }))],
  ])('%s', async (_what, raw) => {
    expectClientError(await post(raw()));
  });

  it('a lone surrogate in clientPaymentId is refused (stored it became U+FFFD: "x\\ud800" and "x\\udfff" collided as one id); an emoji passes', async () => {
    const id = `edge-${randomUUID()}`;
    const before = await paymentCount();
    const res = await post(withRaw('clientPaymentId', `"${id}\\ud800"`));
    const problem = expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(problem.errors).toEqual([{ field: 'clientPaymentId', message: expect.stringContaining('lone surrogate') }]);
    expectNoLeak(res);
    expect(await paymentCount()).toBe(before);
    const emoji = await post(JSON.stringify(paymentBody({ clientPaymentId: `${id}-\u{1F4B6}` })));
    expect(emoji.statusCode, emoji.body).toBe(200);
    expect(emoji.json().paymentInfo.clientPaymentId).toBe(`${id}-\u{1F4B6}`);
  });

  it('a businessId that is a UUID of no business → 403, not 5xx', async () => {
    expectProblem(await post(JSON.stringify(paymentBody({ businessId: randomUUID() }))), 403, 'FORBIDDEN_BUSINESS');
  });
});

describe('problem details for unknown routes (404 NOT_FOUND)', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/'],
    ['POST', '/v1/payments/extra/segments'],
    ['GET', '/v2/payments'],
  ] as const)('%s %s', async (method, url) => {
    const res = await t.app.inject({ method, url });
    seen.push(res);
    expectProblem(res, 404, 'NOT_FOUND');
  });
});

describe("requests node's HTTP parser refuses (framing) → problem+json too, then the connection closes", () => {
  let port = 0;
  beforeAll(async () => {
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  /** Send raw bytes, read until the server closes: status, headers, body. */
  const raw = (bytes: string) =>
    new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
      });
    });

  // Each request is one the router and the body parser would take (a JSON body on a route that has
  // one): what refuses it is its framing, not a missing Content-Type (415) answered before the
  // parser reaches the bad bytes.
  it.each([
    ['a Content-Length that is not a number', 'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}', 400, 'MALFORMED_REQUEST'],
    ['Content-Length and Transfer-Encoding together', 'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'MALFORMED_REQUEST'],
    ['a chunk size that is not hex', 'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400, 'MALFORMED_REQUEST'],
    ['headers over the limit', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
  ])('%s → %i %s', async (_what, bytes, status, code) => {
    const res = await raw(bytes);
    expect(res.status).toBe(status);
    expect(res.headers).toContain('content-type: application/problem+json');
    expect(res.headers).toContain('x-content-type-options: nosniff');
    expect(JSON.parse(res.body)).toMatchObject({ status, code, type: `https://kassa.dev/problems/${code.toLowerCase().replaceAll('_', '-')}` });
  });
});

describe('a path that exists, with a method it does not answer (405 METHOD_NOT_ALLOWED with Allow)', () => {
  it.each([
    ['PUT', '/v1/payments', 'GET, HEAD, POST'],
    ['DELETE', '/v1/payments', 'GET, HEAD, POST'],
    ['PATCH', '/v1/payments/9e119803-1653-431e-a760-59b81f0e6eb6?x=1', 'GET, HEAD'],
    ['POST', '/v1/balances', 'GET, HEAD'],
    ['PUT', '/v1/whitelisted-addresses', 'GET, HEAD, POST'],
    ['POST', '/health', 'GET, HEAD'],
  ] as const)('%s %s → Allow: %s', async (method, url, allow) => {
    const res = await t.app.inject({ method, url });
    seen.push(res);
    expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe(allow);
    expect(res.json().detail).toBe(`${method} is not allowed on ${url.split('?')[0]}; use ${allow}.`);
  });
});

describe('operational endpoints', () => {
  it('GET /health → 200', async () => {
    const res = await get('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok' });
  });

  it('GET /ready → 200 {status: "ready"} when the database answers', async () => {
    const res = await get('/ready');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ready' });
  });

  it('GET /metrics → Prometheus text with kassa_http_requests_total', async () => {
    await get('/health');
    const res = await get('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('# TYPE kassa_http_requests_total counter');
    expect(res.body).toMatch(/^kassa_http_requests_total\{[^}]*route="\/health"[^}]*\} [1-9]/m);
  });

  it('GET /openapi.json → OpenAPI 3.1 describing POST /v1/payments', async () => {
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const post = doc.paths['/v1/payments']?.post;
    expect(post).toBeDefined();
    const schema = post.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['clientPaymentId', 'businessId', 'locale', 'displayCurrency', 'depositCurrency', 'network']));
    expect(schema.required).toEqual(expect.arrayContaining(['clientPaymentId', 'businessId', 'locale']));
    expect(doc.paths['/v1/payments'].get).toBeDefined();
    expect(doc.paths['/v1/payments/{paymentId}']?.get).toBeDefined();
  });

  it('GET /openapi.json → every withdrawal response, the errors, and both callbacks under webhooks', async () => {
    const doc = (await get('/openapi.json')).json();
    // Each operation lists exactly the errors it can answer.
    const statuses: [string, 'get' | 'post', string[]][] = [
      ['/v1/withdrawals', 'post', ['200', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503']],
      ['/v1/withdrawals/{withdrawalId}', 'get', ['200', '400', '401', '403', '404', '429', '500', '503']],
      ['/v1/withdrawals', 'get', ['200', '400', '401', '403', '429', '500', '503']],
    ];
    for (const [path, method, expected] of statuses) {
      const op = doc.paths[path][method];
      expect(op.responses['200'].content['application/json'].schema.type, `${method} ${path}`).toBe('object');
      expect(Object.keys(op.responses).sort(), `${method} ${path}`).toEqual(expected.sort());
    }
    expect(doc.paths['/v1/withdrawals'].post.responses['422'].description).toContain('INSUFFICIENT_BALANCE');
    expect(Object.keys(doc.paths['/v1/withdrawals'].post.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['withdrawalId', 'status', 'deductedSettlementAmount', 'addressOwner', 'approvals']),
    );
    expect(Object.keys(doc.webhooks).sort()).toEqual(['paymentCallback', 'withdrawalCallback']);
    const payment = doc.webhooks.paymentCallback.post.requestBody.content['application/json'].schema;
    expect(payment.properties.type.enum).toEqual(['payment.status_changed', 'payment.deposit_credited']);
    expect(payment.required).toEqual(expect.arrayContaining(['paymentId', 'status', 'previousStatus', 'changedAt', 'payment']));
    const withdrawal = doc.webhooks.withdrawalCallback.post.requestBody.content['application/json'].schema;
    expect(withdrawal.oneOf ?? withdrawal.anyOf).toHaveLength(3);
  });

  it('GET /docs → the Swagger UI page, its assets served by Kassa itself (no other origin)', async () => {
    const res = await get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/^<!doctype html>/i);
    const assets = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(['/favicon.svg', '/docs/swagger-ui.css', '/openapi.json', '/docs/swagger-ui-bundle.js', '/docs/init.js']);
    // Fetched outside `seen`: a minified bundle is code, which the leak check below would read as stack frames.
    const fetch = (url: string) => t.app.inject({ method: 'GET', url });
    for (const asset of assets) {
      const served = await fetch(asset);
      expect(served.statusCode, asset).toBe(200);
      expect(served.body.length, asset).toBeGreaterThan(asset === '/docs/swagger-ui-bundle.js' ? 1_000_000 : 100);
    }
    expect((await fetch('/docs/swagger-ui-bundle.js')).body).toContain('SwaggerUIBundle');
    expect((await fetch('/docs/init.js')).body).toContain("url: '/openapi.json'");
  });

  it('GET /favicon.ico → a 16×16 icon', async () => {
    const res = await get('/favicon.ico');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/x-icon');
    const ico = res.rawPayload;
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4), ico[6], ico[7]]).toEqual([0, 1, 1, 16, 16]);
    expect(ico.length).toBe(6 + 16 + ico.readUInt32LE(14));
  });
});

describe('no response of this file leaks internals', () => {
  it('has no 5xx, stack frame or SQL in any response', () => {
    expect(seen.length).toBeGreaterThan(40);
    for (const res of seen) {
      expect(res.statusCode, res.body).toBeLessThan(500);
      expectNoLeak(res);
    }
  });
});
