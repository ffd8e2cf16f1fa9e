/** What every scenario receives from the harness. */
import type { Database } from '../db/client.js';
import { createBusiness } from '../server/modules/businesses/index.js';
import { generateMasterKey, parseMasterKey } from '../server/platform/secrets.js';
import { authorizationHeader } from '../server/edges/rest/signature.rules.js';
import type { BenchDatabase, Child, Cleanup, KassaProcess } from './env.js';

export type BenchOptions = {
  /** Seconds per load phase (default 10). */
  durationS: number;
  /** Unmeasured load before the first measured create phase (default 10). */
  warmupS: number;
  /**
   * Seconds of each paced create phase (default 40). Longer than the kernel's writeback cycle (pages
   * written back once 30 s dirty, by a flusher waking every 5 s), so that its p99 weighs the disk's
   * bursts as a Kassa running at that rate meets them, not as one 10 s window happens to.
   */
  pacedS: number;
  /** Concurrent HTTP connections / database callers (default 10). */
  connections: number;
  /** postgres.js pool size of the raw limits; Kassa's own pool is 10 (server/main.ts), and its generic-plan pool's 2 connections (db/client.ts, GENERIC_POOL_SIZE) serve the create batches and the read stamps, one batch in flight each. */
  poolSize: number;
  /** Callbacks drained in scenario 3 (default 10,000). */
  callbacks: number;
  /** graphile-worker concurrency for callbacks and no-op jobs (default: Kassa's, DEFAULT_CONCURRENCY in jobs/worker.ts). */
  workerConcurrency: number;
  /** Checkout page loads measured in scenario 4 (default 20). */
  checkoutRuns: number;
  /** Blocks mined and scanned in scenario 6 (default 1,000). */
  scanBlocks: number;
  /** Fail the checkout rows (instead of null) when Chromium or playwright-core is missing. */
  requireBrowser: boolean;
  /** Only these scenarios (create, read, callbacks, checkout, scan); all when empty. */
  only: string[];
  /** Extra node flags for the Kassa child process (e.g. --cpu-prof). */
  kassaNodeArgs: string[];
  /** A file that receives the Kassa child's stdout and stderr. */
  kassaLog?: string;
  log: (message: string) => void;
};

export type BenchBusiness = { businessId: string; apiKey: string; apiSecret: string };

export type BenchContext = {
  options: BenchOptions;
  cleanup: Cleanup;
  db: BenchDatabase;
  /** The bench's own pool on the same database (setup, checks, raw limits use their own). */
  database: Database;
  masterKeyHex: string;
  business: BenchBusiness;
  /** The Kassa child process (scenarios 1, 2, 4), started on first use. */
  kassa: () => Promise<KassaProcess>;
  /** The bare Fastify child (scenario 1), started on first use. */
  fastify: () => Promise<Child & { url: string }>;
  /** The callback receiver child (scenario 3), started on first use. */
  receiver: () => Promise<Child & { url: string }>;
  notes: string[];
};

/** A business for the bench, with the master key its secrets are sealed under (Kassa's children get the same key). */
export async function createBenchBusiness(database: Database, name = 'Bench shop'): Promise<{ masterKeyHex: string; business: BenchBusiness }> {
  const masterKeyHex = generateMasterKey();
  const created = await createBusiness(database.db, parseMasterKey(masterKeyHex), { name });
  return { masterKeyHex, business: { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret } };
}

/**
 * Signed `POST /v1/payments` requests for the load generators: a EUR 25.00 payment, each with a new
 * clientPaymentId (`<prefix>-1`, `<prefix>-2`, …) and its own signature, as a merchant sends them.
 */
export function signedCreates(business: BenchBusiness, prefix: string): () => { body: string; headers: Record<string, string> } {
  let n = 0;
  return () => {
    const body = JSON.stringify({
      clientPaymentId: `${prefix}-${++n}`,
      businessId: business.businessId,
      locale: 'en-US',
      displayCurrency: 'EUR',
      displayAmount: '25.00',
    });
    const authorization = authorizationHeader(business.apiKey, business.apiSecret, { method: 'POST', path: '/v1/payments', body });
    return { body, headers: { 'content-type': 'application/json', authorization } };
  };
}

/** A signed request to the Kassa child, as a merchant would send it. */
export async function signedFetch(
  baseUrl: string,
  business: BenchBusiness,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(payload ? { 'content-type': 'application/json' } : {}),
      authorization: authorizationHeader(business.apiKey, business.apiSecret, { method, path, body: payload }),
    },
    ...(payload ? { body: payload } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

export type CreatedPayment = { paymentId: string; paymentUrl: string };

/** A crypto-priced payment (PENDING, with its deposit address from the start). */
export async function createCryptoPayment(baseUrl: string, business: BenchBusiness, clientPaymentId: string): Promise<CreatedPayment> {
  const { status, json } = await signedFetch(baseUrl, business, 'POST', '/v1/payments', {
    clientPaymentId,
    businessId: business.businessId,
    locale: 'en-US',
    depositCurrency: 'BTC',
    network: 'BTC',
    depositAmount: '0.001',
  });
  const answer = json as { paymentInfo?: { paymentId?: string }; paymentUrl?: string };
  if (status !== 200 || !answer.paymentInfo?.paymentId || !answer.paymentUrl) {
    throw new Error(`creating a payment answered ${status}: ${JSON.stringify(json).slice(0, 500)}`);
  }
  return { paymentId: answer.paymentInfo.paymentId, paymentUrl: answer.paymentUrl };
}

export async function simulateDepositOverHttp(baseUrl: string, business: BenchBusiness, paymentId: string, amount = '0.0004'): Promise<void> {
  const { status, json } = await signedFetch(baseUrl, business, 'POST', `/v1/test-helpers/payments/${paymentId}/deposits`, {
    depositCurrency: 'BTC',
    network: 'BTC',
    amount,
    confirm: true,
  });
  if (status !== 200) throw new Error(`simulating a deposit answered ${status}: ${JSON.stringify(json).slice(0, 500)}`);
}
