/**
 * The operator CLI (CONTRACT §9) as a real child process against a fresh
 * database: JSON output, exit codes, and that what it prints works.
 */
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, businesses } from '../db/schema.js';
import { createServer, type KassaServer } from '../server/edges/app.js';
import { findOperatorByToken } from '../server/modules/businesses/business.service.js';
import { authorizationHeader } from '../server/edges/rest/signature.rules.js';
import { buildDeps } from '../server/compose.js';
import { decryptSecret, parseMasterKey } from '../server/platform/secrets.js';
import { TEST_MASTER_KEY, testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { cliOn, singleJson } from './helpers/cli.js';

const masterKey = parseMasterKey(TEST_MASTER_KEY);

let db: TestDatabase;
let server: KassaServer;

const kassa = cliOn(() => db.url);

beforeAll(async () => {
  db = await createTestDatabase();
  const deps = buildDeps(testConfig(), db, masterKey);
  server = await createServer({ deps, logger: false });
  await server.app.ready();
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

describe('business:create', { timeout: 60_000 }, () => {
  it('--json prints exactly businessId, apiKey, apiSecret, callbackSecret, and the key works', async () => {
    const result = await kassa('business:create', '--name', 'Shop', '--json');
    expect(result.code).toBe(0);
    const out = singleJson(result.stdout);
    expect(Object.keys(out).sort()).toEqual(['apiKey', 'apiSecret', 'businessId', 'callbackSecret']);
    expect(out.businessId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(out.apiKey).toBeTypeOf('string');
    expect(out.apiSecret).toBeTypeOf('string');
    expect(out.callbackSecret).toMatch(/^whsec_/);
    const { businessId, apiKey, apiSecret, callbackSecret } = out as Record<string, string>;

    // Stored: the business with its name, the key encrypted (never in clear), the callback secret encrypted.
    const business = await db.db.query.businesses.findFirst({ where: eq(businesses.id, businessId!) });
    expect(business?.name).toBe('Shop');
    expect(business!.callbackSecretEnc).not.toContain(callbackSecret!);
    expect(decryptSecret(masterKey, business!.callbackSecretEnc)).toBe(callbackSecret);
    const key = await db.db.query.apiKeys.findFirst({ where: eq(apiKeys.key, apiKey!) });
    expect(key?.businessId).toBe(businessId);
    expect(key!.secretEnc).not.toContain(apiSecret!);
    expect(decryptSecret(masterKey, key!.secretEnc)).toBe(apiSecret);

    // The printed key signs a payment creation on a server over the same database.
    const body = JSON.stringify({ clientPaymentId: 'cli-1', businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '10.00' });
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: body,
      headers: {
        'content-type': 'application/json',
        authorization: authorizationHeader(apiKey!, apiSecret!, { method: 'POST', path: '/v1/payments', body }),
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().paymentInfo.businessId).toBe(businessId);
    expect(res.json().paymentInfo.expectedDisplayAmount).toBe('10.00');

    // A wrong secret is refused: the key is really checked.
    const forged = await server.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: body,
      headers: {
        'content-type': 'application/json',
        authorization: authorizationHeader(apiKey!, `${apiSecret}x`, { method: 'POST', path: '/v1/payments', body }),
      },
    });
    expect(forged.statusCode).toBe(401);
  });

  it('stores the callback URLs given', async () => {
    const result = await kassa(
      'business:create', '--name', 'Hooks', '--json',
      '--withdrawal-callback-url', 'https://shop.example/w', '--payment-callback-url', 'https://shop.example/p',
    );
    expect(result.code).toBe(0);
    const { businessId } = singleJson(result.stdout) as { businessId: string };
    const business = await db.db.query.businesses.findFirst({ where: eq(businesses.id, businessId) });
    expect(business?.withdrawalCallbackUrl).toBe('https://shop.example/w');
    expect(business?.paymentCallbackUrl).toBe('https://shop.example/p');
  });

  it('without --json prints the four values for a human', async () => {
    const result = await kassa('business:create', '--name', 'Human shop');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/businessId\s+[0-9a-f-]{36}/);
    expect(result.stdout).toMatch(/apiKey\s+\S+/);
    expect(result.stdout).toMatch(/apiSecret\s+\S+/);
    expect(result.stdout).toMatch(/callbackSecret\s+whsec_\S+/);
  });

  it('refuses a missing name or a bad callback URL with exit code 2', async () => {
    const noName = await kassa('business:create', '--json');
    expect(noName.code).toBe(2);
    expect(noName.stdout).toBe('');
    expect(noName.stderr).toContain('--name');
    const badUrl = await kassa('business:create', '--name', 'X', '--payment-callback-url', 'ftp://x', '--json');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stdout).toBe('');
  });
});

describe('apikey:create', { timeout: 60_000 }, () => {
  let businessId: string;
  beforeAll(async () => {
    const created = await kassa('business:create', '--name', 'Keys', '--json');
    expect(created.code).toBe(0);
    businessId = (singleJson(created.stdout) as { businessId: string }).businessId;
  }, 60_000);

  it('--json prints apiKey, apiSecret and the scopes; the key has exactly those scopes', async () => {
    const result = await kassa('apikey:create', '--business', businessId, '--scopes', 'READ_PAYMENT,CREATE_PAYMENT', '--json');
    expect(result.code).toBe(0);
    const out = singleJson(result.stdout) as { apiKey: string; apiSecret: string; scopes: string[]; businessId?: string };
    expect(out.apiKey).toBeTypeOf('string');
    expect(out.apiSecret).toBeTypeOf('string');
    expect(out.scopes).toEqual(['READ_PAYMENT', 'CREATE_PAYMENT']);
    const key = await db.db.query.apiKeys.findFirst({ where: eq(apiKeys.key, out.apiKey) });
    expect(key?.businessId).toBe(businessId);
    expect([...key!.scopes].sort()).toEqual(['CREATE_PAYMENT', 'READ_PAYMENT']);
    expect(decryptSecret(masterKey, key!.secretEnc)).toBe(out.apiSecret);
  });

  it('a key without CREATE_PAYMENT is refused payment creation with 403', async () => {
    const result = await kassa('apikey:create', '--business', businessId, '--scopes', 'READ_PAYMENT', '--json');
    expect(result.code).toBe(0);
    const out = singleJson(result.stdout) as { apiKey: string; apiSecret: string; scopes: string[] };
    expect(out.scopes).toEqual(['READ_PAYMENT']);
    const body = JSON.stringify({ clientPaymentId: 'cli-ro', businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '5.00' });
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: body,
      headers: {
        'content-type': 'application/json',
        authorization: authorizationHeader(out.apiKey, out.apiSecret, { method: 'POST', path: '/v1/payments', body }),
      },
    });
    expect(res.statusCode).toBe(403);
  });

  it('an unknown scope exits 2 and names the scope', async () => {
    const result = await kassa('apikey:create', '--business', businessId, '--scopes', 'READ_PAYMENT,LAUNCH_ROCKETS', '--json');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('LAUNCH_ROCKETS');
    expect(result.stdout).toBe('');
  });

  it('an unknown business fails without printing a key', async () => {
    const result = await kassa('apikey:create', '--business', '00000000-0000-4000-8000-000000000000', '--scopes', 'READ_PAYMENT', '--json');
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
  });
});

describe('operator:create', { timeout: 60_000 }, () => {
  it('--json prints a kop_ bearer token for the role', async () => {
    const result = await kassa('operator:create', '--name', 'ann', '--role', 'admin', '--json');
    expect(result.code).toBe(0);
    const out = singleJson(result.stdout) as { token: string };
    expect(out.token).toMatch(/^kop_[A-Za-z0-9_-]+$/);
    const row = await findOperatorByToken(db.db, out.token);
    expect(row?.name).toBe('ann');
    expect(row?.role).toBe('admin');

    const viewer = await kassa('operator:create', '--name', 'vic', '--role', 'viewer', '--json');
    expect(viewer.code).toBe(0);
    const viewerToken = (singleJson(viewer.stdout) as { token: string }).token;
    expect(viewerToken).toMatch(/^kop_/);
    expect(viewerToken).not.toBe(out.token);
    expect((await findOperatorByToken(db.db, viewerToken))?.role).toBe('viewer');
  });

  it('a name taken already exits 1 with OPERATOR_NAME_TAKEN: --operator names one operator', async () => {
    const result = await kassa('operator:create', '--name', 'ann', '--role', 'viewer', '--json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('OPERATOR_NAME_TAKEN');
    const [row] = await db.sql`select count(*)::int as n from operators where name = 'ann'`;
    expect(row!.n).toBe(1);
  });

  it('--role boss exits 2', async () => {
    const result = await kassa('operator:create', '--name', 'bob', '--role', 'boss', '--json');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/role/);
  });
});

describe('other commands', { timeout: 60_000 }, () => {
  it('migrate exits 0', async () => {
    const result = await kassa('migrate');
    expect(result.code).toBe(0);
  });

  it('an unknown command exits 2 and names it', async () => {
    const result = await kassa('business:explode', '--json');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('business:explode');
    expect(result.stdout).toBe('');
  });

  it('an unknown option exits 2', async () => {
    const result = await kassa('business:create', '--name', 'X', '--colour', 'blue');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });
});

describe('sanctions:import', { timeout: 60_000 }, () => {
  const SDN_FILE = join(process.cwd(), 'test/adapters/screening/fixtures/sdn_advanced.sample.xml');

  it('imports the SDN file and prints the counts per network as one JSON object; twice gives the same rows', async () => {
    const first = await kassa('sanctions:import', SDN_FILE, '--json');
    expect(first.code, first.stderr).toBe(0);
    const counts = singleJson(first.stdout) as { addresses: number; perNetwork: Record<string, number> };
    const [stored] = await db.sql`select count(*)::int as n from sanctioned_addresses where list = 'ofac'`;
    expect(counts.addresses).toBe(stored!.n);
    expect(counts.perNetwork.BTC).toBeGreaterThan(0);
    const again = await kassa('sanctions:import', SDN_FILE, '--json');
    expect(singleJson(again.stdout)).toEqual(counts);
    const [after] = await db.sql`select count(*)::int as n from sanctioned_addresses where list = 'ofac'`;
    expect(after!.n).toBe(stored!.n);
  });

  it('without a source it exits 2 and says what it needs; a missing file exits 1 and changes nothing', async () => {
    const bare = await kassa('sanctions:import');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/file path or an http\(s\) URL/);
    const [before] = await db.sql`select count(*)::int as n from sanctioned_addresses`;
    const missing = await kassa('sanctions:import', '/nonexistent/sdn.xml');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    const [after] = await db.sql`select count(*)::int as n from sanctioned_addresses`;
    expect(after!.n).toBe(before!.n);
  });
});
