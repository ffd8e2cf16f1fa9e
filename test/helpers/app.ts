/**
 * A real Kassa server on a fresh database, with a controllable clock, a
 * demo business and helpers to send correctly signed requests.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createServer } from '../../server/edges/app.js';
import { createBusiness, type BusinessSettings } from '../../server/modules/businesses/business.service.js';
import { loadConfig, type Config } from '../../server/platform/config.js';
import type { Deps } from '../../server/deps.js';
import { authorizationHeader } from '../../server/edges/rest/signature.rules.js';
import { buildDeps } from '../../server/compose.js';
import type { LiveChains } from '../../server/adapters/chain/live/live-chains.js';
import { parseMasterKey } from '../../server/platform/secrets.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export const TEST_MASTER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** A clock tests move by hand. */
export class TestClock {
  // In the past of the real clock: jobs the worker schedules at clock time run at once.
  constructor(public current = new Date('2026-01-15T12:00:00.000Z')) {}
  now = () => new Date(this.current);
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export type TestBusiness = { businessId: string; apiKey: string; apiSecret: string; callbackSecret: string };

export type TestApp = {
  app: FastifyInstance;
  deps: Deps;
  db: TestDatabase;
  clock: TestClock;
  business: TestBusiness;
  addBusiness: (settings?: BusinessSettings & { name?: string }) => Promise<TestBusiness>;
  /** A signed request as `who` (default: the app's business). */
  signed: (
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    who?: { apiKey: string; apiSecret: string },
  ) => Promise<LightMyRequestResponse>;
  close: () => Promise<void>;
};

export function testEnv(env: Record<string, string> = {}): Record<string, string> {
  return { KASSA_MASTER_KEY: TEST_MASTER_KEY, PUBLIC_URL: 'http://kassa.test', LOG_LEVEL: 'silent', ...env };
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig(testEnv(env));
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    business?: BusinessSettings;
    live?: LiveChains;
    /** Build Deps another way (live chains on real nodes): given the config, the database and the test clock. */
    deps?: (config: Config, db: TestDatabase, now: () => Date) => Promise<Deps>;
  } = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  const clock = new TestClock();
  const config = testConfig(options.env);
  // The same environment as the config: live adapters (rates, screening) read their variables from it.
  const deps = options.deps
    ? await options.deps(config, db, clock.now)
    : buildDeps(config, db, parseMasterKey(TEST_MASTER_KEY), clock.now, undefined, testEnv(options.env), options.live ?? null);
  // Every 200 answer of the REST route table is checked against its response schema in tests.
  const server = await createServer({ deps, logger: false, checkResponses: true });
  await server.app.ready();
  const addBusiness = async (settings: BusinessSettings & { name?: string } = {}): Promise<TestBusiness> => {
    const created = await createBusiness(db.db, deps.masterKey, { name: 'Test shop', ...settings });
    return { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret, callbackSecret: created.callbackSecret };
  };
  const business = await addBusiness(options.business);
  return {
    app: server.app,
    deps,
    db,
    clock,
    business,
    addBusiness,
    signed: (method, path, body, who = business) => {
      const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      return server.app.inject({
        method,
        url: path,
        payload: payload || undefined,
        headers: {
          ...(payload ? { 'content-type': 'application/json' } : {}),
          authorization: authorizationHeader(who.apiKey, who.apiSecret, {
            method,
            path,
            body: payload,
            timestamp: Math.floor(clock.now().getTime() / 1000),
          }),
        },
      });
    },
    close: async () => {
      await server.stop();
      await db.drop();
    },
  };
}
