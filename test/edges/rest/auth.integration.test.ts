/**
 * Merchant request authentication (spec §5, CONTRACT §2): the KASSA-API
 * header, the HMAC over timestamp, method, path with query and raw body,
 * the ±300 s clock window, revocation, scopes, and secrets at rest.
 * Requests are built by hand with `authorizationHeader` so each test can
 * break exactly one part of an otherwise valid request.
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../server/modules/businesses/business.service.js';
import { authorizationHeader, sign } from '../../../server/edges/rest/signature.rules.js';
import type { Scope } from '../../../server/modules/money/catalog.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

// ---------------------------------------------------------------------------
// Local helpers

type Credentials = { apiKey: string; apiSecret: string };
type Method = 'GET' | 'POST';

const nowSeconds = () => Math.floor(t.clock.now().getTime() / 1000);

/** The Authorization header for one request; every part can be overridden. */
function header(
  request: { method: Method; path: string; body?: string; timestamp?: number },
  who: Credentials = t.business,
): string {
  return authorizationHeader(who.apiKey, who.apiSecret, { timestamp: nowSeconds(), ...request });
}

/** Send exactly what is given: URL, raw body and Authorization header (none when undefined). */
function send(method: Method, url: string, options: { body?: string; authorization?: string } = {}) {
  return t.app.inject({
    method,
    url,
    payload: options.body,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.authorization !== undefined ? { authorization: options.authorization } : {}),
    },
  });
}

const paymentBody = (clientPaymentId = `auth-${randomUUID()}`) =>
  JSON.stringify({ clientPaymentId, businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '5.00' });

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'errors', 'status', 'title', 'type']);
  expect(body.status).toBe(status);
  expect(body.code).toBe(code);
  return body as { detail: string };
}
const expectUnauthorized = (res: LightMyRequestResponse) => {
  // RFC 9110: a 401 names the scheme that would be accepted.
  expect(res.headers['www-authenticate']).toBe('KASSA-API');
  return expectProblem(res, 401, 'UNAUTHORIZED');
};

const LIST = '/v1/payments?limit=1';

async function paymentsWithClientId(clientPaymentId: string): Promise<number> {
  const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from payments where client_payment_id = ${clientPaymentId}`;
  return row!.n;
}

async function newKey(scopes: readonly Scope[]): Promise<Credentials> {
  return createApiKey(t.db.db, t.deps.masterKey, t.business.businessId, scopes);
}

// ---------------------------------------------------------------------------

describe('a correctly signed request', () => {
  it('is accepted for GET (empty body) and POST (JSON body)', async () => {
    expect((await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }) })).statusCode).toBe(200);
    const body = paymentBody();
    const res = await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }) });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('missing or malformed Authorization header → 401', () => {
  it('refuses a request without the header', async () => {
    expectUnauthorized(await send('GET', LIST));
    const body = paymentBody('auth-no-header');
    expectUnauthorized(await send('POST', '/v1/payments', { body }));
    expect(await paymentsWithClientId('auth-no-header')).toBe(0);
  });

  it('refuses an empty header', async () => {
    expectUnauthorized(await send('GET', LIST, { authorization: '' }));
  });

  const valid = () => header({ method: 'GET', path: LIST });
  const signatureOf = (h: string) => /signature=([^,]*)/.exec(h)![1]!;

  it.each<[string, (h: string) => string]>([
    ['another scheme word', (h) => h.replace('KASSA-API ', 'OTHER-API ')],
    ['a Bearer scheme', (h) => `Bearer ${signatureOf(h)}`],
    ['no scheme word', (h) => h.replace('KASSA-API ', '')],
    ['no api-key part', (h) => h.replace(/api-key=[^,]*,/, '')],
    ['no signature part', (h) => h.replace(/signature=[^,]*,/, '')],
    ['no timestamp part', (h) => h.replace(/,timestamp=\d+/, '')],
    ['an empty signature', (h) => h.replace(/signature=[^,]*/, 'signature=')],
    ['an uppercase hex signature', (h) => h.replace(signatureOf(h), signatureOf(h).toUpperCase())],
    ['a truncated signature', (h) => h.replace(signatureOf(h), signatureOf(h).slice(0, 63))],
    ['a base64 signature', (h) => h.replace(signatureOf(h), Buffer.from(signatureOf(h), 'hex').toString('base64'))],
  ])('refuses %s', async (_what, mutate) => {
    const good = valid();
    const bad = mutate(good);
    expect(bad).not.toBe(good);
    expectUnauthorized(await send('GET', LIST, { authorization: bad }));
  });

  it.each(['2026-11-22T12:00:00Z', `${Math.floor(Date.parse('2026-11-22T12:00:00Z') / 1000)}.0`, '-1', '0x1', 'abc'])(
    'refuses the non-digit timestamp %j, even correctly signed over it',
    async (timestamp) => {
      const signature = sign(t.business.apiSecret, timestamp, 'GET', LIST, '');
      expectUnauthorized(await send('GET', LIST, { authorization: `KASSA-API api-key=${t.business.apiKey},signature=${signature},timestamp=${timestamp}` }));
    },
  );
});

describe('unknown key or wrong signature → 401', () => {
  it('refuses an unknown API key', async () => {
    expectUnauthorized(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, { apiKey: 'kk_unknown', apiSecret: t.business.apiSecret }) }));
  });

  it('refuses a signature made with the wrong secret', async () => {
    expectUnauthorized(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, { apiKey: t.business.apiKey, apiSecret: 'ks_wrong' }) }));
  });

  it('refuses a signature made with another business’s secret', async () => {
    const other = await t.addBusiness();
    expectUnauthorized(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, { apiKey: t.business.apiKey, apiSecret: other.apiSecret }) }));
  });

  it('refuses a signature over a different path (the query string is signed)', async () => {
    const signedFor = header({ method: 'GET', path: '/v1/payments?limit=1' });
    expectUnauthorized(await send('GET', '/v1/payments?limit=2', { authorization: signedFor }));
    expect((await send('GET', '/v1/payments?limit=1', { authorization: signedFor })).statusCode).toBe(200);
  });

  it('refuses a signature over the path without its query string', async () => {
    const signedFor = header({ method: 'GET', path: '/v1/payments' });
    expectUnauthorized(await send('GET', '/v1/payments?limit=1', { authorization: signedFor }));
    expect((await send('GET', '/v1/payments', { authorization: signedFor })).statusCode).toBe(200);
  });

  it('refuses a signature over a different method', async () => {
    const body = paymentBody();
    expectUnauthorized(await send('POST', '/v1/payments', { body, authorization: header({ method: 'GET', path: '/v1/payments', body }) }));
  });

  it('refuses a signature over a different body, and creates nothing', async () => {
    const signedBody = paymentBody('auth-signed-body');
    const sentBody = signedBody.replace('"5.00"', '"500.00"');
    expectUnauthorized(await send('POST', '/v1/payments', { body: sentBody, authorization: header({ method: 'POST', path: '/v1/payments', body: signedBody }) }));
    expect(await paymentsWithClientId('auth-signed-body')).toBe(0);
    // The raw bytes are signed: the same JSON re-spaced is a different body.
    const respaced = JSON.stringify(JSON.parse(signedBody), null, 2);
    expectUnauthorized(await send('POST', '/v1/payments', { body: respaced, authorization: header({ method: 'POST', path: '/v1/payments', body: signedBody }) }));
    expect(await paymentsWithClientId('auth-signed-body')).toBe(0);
    const ok = await send('POST', '/v1/payments', { body: signedBody, authorization: header({ method: 'POST', path: '/v1/payments', body: signedBody }) });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().paymentInfo.expectedDisplayAmount).toBe('5.00');
  });

  it('refuses a request whose body was removed after signing', async () => {
    const body = paymentBody();
    expectUnauthorized(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST, body }) }));
  });
});

describe('timestamp within 300 s of the server clock', () => {
  const at = (offset: number) => send('GET', LIST, { authorization: header({ method: 'GET', path: LIST, timestamp: nowSeconds() + offset }) });

  it.each([-301, 301, -3600, 86_400])('refuses a timestamp %i s away with 401', async (offset) => {
    expectUnauthorized(await at(offset));
  });

  it.each([-299, 299, -300, 300, 0])('accepts a timestamp %i s away', async (offset) => {
    const res = await at(offset);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('follows the server clock, not the wall clock', async () => {
    const timestamp = nowSeconds();
    const authorization = header({ method: 'GET', path: LIST, timestamp });
    expect((await send('GET', LIST, { authorization })).statusCode).toBe(200);
    t.clock.advance(301_000);
    try {
      expectUnauthorized(await send('GET', LIST, { authorization }));
    } finally {
      t.clock.advance(-301_000);
    }
  });
});

describe('revoked keys → 401', () => {
  it('refuses a key as soon as revoked_at is set', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    expect((await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, key) })).statusCode).toBe(200);
    await t.db.sql`update api_keys set revoked_at = now() where key = ${key.apiKey}`;
    expectUnauthorized(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, key) }));
    const body = paymentBody('auth-revoked');
    expectUnauthorized(await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) }));
    expect(await paymentsWithClientId('auth-revoked')).toBe(0);
    // Other keys of the business keep working.
    expect((await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }) })).statusCode).toBe(200);
  });
});

describe('keys cached in the process: create and read confirm them in their own statement', () => {
  const create = (key: Credentials, clientPaymentId: string) => {
    const body = paymentBody(clientPaymentId);
    return send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) });
  };
  const read = (key: Credentials, paymentId: string) => {
    const path = `/v1/payments/${paymentId}`;
    return send('GET', path, { authorization: header({ method: 'GET', path }, key) });
  };

  it('a key revoked after it was cached is refused by both at once, and nothing is written', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const created = await create(key, `cached-${randomUUID()}`);
    expect(created.statusCode, created.body).toBe(200);
    const paymentId = created.json().paymentInfo.paymentId as string;
    expect((await read(key, paymentId)).statusCode).toBe(200);
    // Behind the process's back, as another process (or the CLI) would do it.
    await t.db.sql`update api_keys set revoked_at = now() where key = ${key.apiKey}`;
    expectUnauthorized(await read(key, paymentId));
    const clientPaymentId = `cached-revoked-${randomUUID()}`;
    expectUnauthorized(await create(key, clientPaymentId));
    expect(await paymentsWithClientId(clientPaymentId)).toBe(0);
  });

  it('a scope taken away after caching is refused (403) and a scope granted is honoured', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    expect((await create(key, `cached-${randomUUID()}`)).statusCode).toBe(200);
    await t.db.sql`update api_keys set scopes = ${['READ_PAYMENT']} where key = ${key.apiKey}`;
    const refused = `cached-scope-${randomUUID()}`;
    expectProblem(await create(key, refused), 403, 'FORBIDDEN_SCOPE');
    expect(await paymentsWithClientId(refused)).toBe(0);
    await t.db.sql`update api_keys set scopes = ${['READ_PAYMENT', 'CREATE_PAYMENT']} where key = ${key.apiKey}`;
    expect((await create(key, `cached-${randomUUID()}`)).statusCode).toBe(200);
  });

  it('a fee changed after caching prices the next payment', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const before = await create(key, `cached-fee-${randomUUID()}`);
    expect(before.statusCode, before.body).toBe(200);
    const [current] = await t.db.sql<{ fee: string }[]>`select service_fee_percent::text as fee from businesses where id = ${t.business.businessId}`;
    const fee = current!.fee;
    await t.db.sql`update businesses set service_fee_percent = 2.5 where id = ${t.business.businessId}`;
    try {
      const clientPaymentId = `cached-fee-${randomUUID()}`;
      const after = await create(key, clientPaymentId);
      expect(after.statusCode, after.body).toBe(200);
      const [row] = await t.db.sql<{ fee: string }[]>`select service_fee_percent::text as fee from payments where client_payment_id = ${clientPaymentId}`;
      expect(row!.fee).toBe('2.5');
    } finally {
      await t.db.sql`update businesses set service_fee_percent = ${fee} where id = ${t.business.businessId}`;
    }
  });

  it('the record a cached create answers is the record stored (built from the values sent, not read back)', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    expect((await create(key, `cached-${randomUUID()}`)).statusCode).toBe(200); // caches the key
    const bodies = [
      JSON.parse(paymentBody(`cached-fiat-${randomUUID()}`)),
      { clientPaymentId: `cached-crypto-${randomUUID()}`, businessId: t.business.businessId, locale: 'de-DE', depositCurrency: 'BTC', network: 'BTC', depositAmount: '0.00123', redirectUrl: 'https://shop.example/done', expirationMinutes: 45 },
    ];
    for (const payload of bodies) {
      const body = JSON.stringify(payload);
      const created = await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) });
      expect(created.statusCode, created.body).toBe(200);
      const record = created.json().paymentInfo;
      const stored = await read(key, record.paymentId);
      expect(stored.statusCode, stored.body).toBe(200);
      expect(record).toStrictEqual(stored.json());
    }
  });

  it('an unknown payment read with a cached key is 404, and a replayed create returns the first payment', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const clientPaymentId = `cached-replay-${randomUUID()}`;
    const first = await create(key, clientPaymentId);
    expect(first.statusCode, first.body).toBe(200);
    const again = await create(key, clientPaymentId);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().paymentInfo.paymentId).toBe(first.json().paymentInfo.paymentId);
    expect(await paymentsWithClientId(clientPaymentId)).toBe(1);
    expectProblem(await read(key, randomUUID()), 404, 'NOT_FOUND');
  });
});

describe('concurrent creates share one INSERT (platform/batch.ts), each with its own outcome', () => {
  const create = (key: Credentials, body: string) =>
    send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) });

  it('fresh creates, a replay inside the batch, a reused id with another body and a revoked key, all at once', async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const revoked = await newKey(['CREATE_PAYMENT']);
    // Both keys cached, then one revoked behind the process's back.
    expect((await create(key, paymentBody())).statusCode).toBe(200);
    expect((await create(revoked, paymentBody())).statusCode).toBe(200);
    await t.db.sql`update api_keys set revoked_at = now() where key = ${revoked.apiKey}`;

    const fresh = Array.from({ length: 5 }, () => `batch-${randomUUID()}`);
    const twice = `batch-twice-${randomUUID()}`;
    const reused = `batch-reused-${randomUUID()}`;
    const refused = `batch-revoked-${randomUUID()}`;
    expect((await create(key, paymentBody(reused))).statusCode).toBe(200);
    const other = JSON.stringify({ ...JSON.parse(paymentBody(reused)), displayAmount: '99.00' });

    const [freshAnswers, twiceAnswers, reusedAnswer, refusedAnswer] = await Promise.all([
      Promise.all(fresh.map((id) => create(key, paymentBody(id)))),
      Promise.all([create(key, paymentBody(twice)), create(key, paymentBody(twice))]),
      create(key, other),
      create(revoked, paymentBody(refused)),
    ]);

    for (const answer of freshAnswers) expect(answer.statusCode, answer.body).toBe(200);
    expect(new Set(freshAnswers.map((a) => a.json().paymentInfo.paymentId)).size).toBe(5);
    expect(twiceAnswers.map((a) => a.statusCode)).toEqual([200, 200]);
    expect(twiceAnswers[1]!.json().paymentInfo.paymentId).toBe(twiceAnswers[0]!.json().paymentInfo.paymentId);
    expect(await paymentsWithClientId(twice)).toBe(1);
    expectProblem(reusedAnswer, 409, 'IDEMPOTENCY_CONFLICT');
    expectUnauthorized(refusedAnswer);
    expect(await paymentsWithClientId(refused)).toBe(0);

    // One statement wrote the fresh payments and the one of the pair: one transaction id.
    const [row] = await t.db.sql<{ writers: number }[]>`
      select count(distinct xmin::text)::int as writers from payments where client_payment_id = any(${[...fresh, twice]})`;
    expect(row!.writers).toBe(1);
  });
});

describe('concurrent reads, each with its own outcome', () => {
  const read = (key: Credentials, paymentId: string) => {
    const path = `/v1/payments/${paymentId}`;
    return send('GET', path, { authorization: header({ method: 'GET', path }, key) });
  };
  const created = async (key: Credentials, business = t.business.businessId) => {
    const body = JSON.stringify({ ...JSON.parse(paymentBody()), businessId: business });
    const res = await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().paymentInfo as { paymentId: string; clientPaymentId: string };
  };

  it("payments, an unknown id, another business's payment and a revoked key's read, all at once", async () => {
    const key = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const revoked = await newKey(['CREATE_PAYMENT', 'READ_PAYMENT']);
    const mine = [await created(key), await created(key), await created(key)];
    const otherBusiness = await t.addBusiness();
    const foreign = await created(otherBusiness, otherBusiness.businessId);
    const revokedOwn = await created(revoked);
    await t.db.sql`update api_keys set revoked_at = now() where key = ${revoked.apiKey}`;

    const [answers, unknown, notMine, refused] = await Promise.all([
      Promise.all(mine.map((p) => read(key, p.paymentId))),
      read(key, randomUUID()),
      read(key, foreign.paymentId),
      read(revoked, revokedOwn.paymentId),
    ]);
    expect(answers.map((a) => [a.statusCode, a.json().paymentId, a.json().clientPaymentId])).toEqual(mine.map((p) => [200, p.paymentId, p.clientPaymentId]));
    expectProblem(unknown, 404, 'NOT_FOUND');
    expectProblem(notMine, 404, 'NOT_FOUND');
    expectUnauthorized(refused);
  });
});

describe('scopes → 403 FORBIDDEN_SCOPE', () => {
  it('a READ_PAYMENT-only key may read but not create', async () => {
    const key = await newKey(['READ_PAYMENT']);
    const body = paymentBody('auth-read-only');
    const problem = expectProblem(
      await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) }),
      403,
      'FORBIDDEN_SCOPE',
    );
    expect(problem.detail).toContain('CREATE_PAYMENT');
    expect(await paymentsWithClientId('auth-read-only')).toBe(0);
    const list = await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, key) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toEqual({ items: expect.any(Array), nextCursor: expect.anything() });
  });

  it('a CREATE_PAYMENT-only key may create but not read', async () => {
    const key = await newKey(['CREATE_PAYMENT']);
    const body = paymentBody();
    const created = await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body }, key) });
    expect(created.statusCode, created.body).toBe(200);
    const path = `/v1/payments/${created.json().paymentInfo.paymentId}`;
    expectProblem(await send('GET', path, { authorization: header({ method: 'GET', path }, key) }), 403, 'FORBIDDEN_SCOPE');
    expectProblem(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, key) }), 403, 'FORBIDDEN_SCOPE');
  });

  it('a key with no scopes is authenticated but may do nothing', async () => {
    const key = await newKey([]);
    expectProblem(await send('GET', LIST, { authorization: header({ method: 'GET', path: LIST }, key) }), 403, 'FORBIDDEN_SCOPE');
  });

  it('checks the signature before the scope: a badly signed request without the scope is 401', async () => {
    const key = await newKey(['READ_PAYMENT']);
    const body = paymentBody();
    expectUnauthorized(await send('POST', '/v1/payments', { body, authorization: header({ method: 'POST', path: '/v1/payments', body: '{}' }, key) }));
  });
});

describe('secrets at rest (CONTRACT §2: stored encrypted)', () => {
  it('does not store the API secret in clear', async () => {
    const rows = await t.db.sql<{ secret_enc: string }[]>`select secret_enc from api_keys where key = ${t.business.apiKey}`;
    expect(rows).toHaveLength(1);
    const stored = rows[0]!.secret_enc;
    expect(stored.length).toBeGreaterThan(0);
    expect(stored).not.toContain(t.business.apiSecret);
    expect(stored).not.toContain(t.business.apiSecret.replace(/^ks_/, ''));
    expect(stored).not.toContain(Buffer.from(t.business.apiSecret).toString('base64'));
    expect(stored).not.toContain(Buffer.from(t.business.apiSecret).toString('hex'));
  });

  it('does not store any column of api_keys holding the secret', async () => {
    const key = await newKey(['READ_PAYMENT']);
    const [row] = await t.db.sql`select * from api_keys where key = ${key.apiKey}`;
    expect(JSON.stringify(row)).not.toContain(key.apiSecret);
  });

  it('does not store the callback secret in clear', async () => {
    const [row] = await t.db.sql`select * from businesses where id = ${t.business.businessId}`;
    expect(JSON.stringify(row)).not.toContain(t.business.callbackSecret);
    expect(JSON.stringify(row)).not.toContain(t.business.callbackSecret.replace(/^whsec_/, ''));
  });

  it('never echoes the secret or the signature in a refusal', async () => {
    const authorization = header({ method: 'GET', path: LIST }, { apiKey: t.business.apiKey, apiSecret: 'ks_wrong' });
    const res = await send('GET', LIST, { authorization });
    expectUnauthorized(res);
    expect(res.body).not.toContain(t.business.apiSecret);
    expect(res.body).not.toContain(/signature=([0-9a-f]+)/.exec(authorization)![1]!);
  });
});
