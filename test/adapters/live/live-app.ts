/**
 * Kassa in live mode (KASSA_SANDBOX=false) on real nodes, for the live chain
 * tests: the real app and worker, rates from a local double in Coinbase's
 * format, the OFAC fixture list imported, and a callback receiver.
 */
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runner } from 'graphile-worker';
import { buildLiveDeps, importSanctionsList } from '../../../server/compose.js';
import type { ProcessRole } from '../../../server/adapters/chain/live/live-chains.js';
import { parseMasterKey } from '../../../server/platform/secrets.js';
import { startTestApp, testEnv, TEST_MASTER_KEY, type TestApp } from '../../helpers/app.js';
import { startTestWorker } from '../../helpers/worker.js';
import { TEST_MNEMONIC } from '../../helpers/watch-only.js';
import { coinbaseRates } from '../rates/fixtures.js';
import { startHttpDouble, type HttpDouble } from '../rates/http-double.js';
import { Receiver } from '../../modules/callbacks/receiver.js';

const SDN_FILE = fileURLToPath(new URL('../screening/fixtures/sdn_advanced.sample.xml', import.meta.url));

export type LiveApp = TestApp & {
  worker: Runner;
  receiver: Receiver;
  /** One pass of the network's scanner, now. */
  scan: (network: string) => Promise<void>;
  /** One pass of the signer's payouts loop, now: unmined payouts sent again (or replaced), final ones recorded. */
  payouts: () => Promise<void>;
  mnemonicFile: string;
  /** The environment the app was built from (to build another process's Deps the same way). */
  env: Record<string, string>;
  stop: () => Promise<void>;
};

/**
 * Crypto per 1 unit of fiat, as Coinbase answers: BTC 50 000 EUR, ETH 2 500 EUR, LTC 80 EUR and
 * 1 USD = 0.92 EUR (USDT 1 USD). USD is what stablecoins are pegged to; USD ↔ EUR pivots on BTC.
 */
export const COINBASE_RATES: Record<string, Record<string, string>> = {
  EUR: { BTC: '0.00002', ETH: '0.0004', LTC: '0.0125', USDT: '1.08695652173913' },
  USD: { BTC: '0.0000184', ETH: '0.000368', LTC: '0.0115', USDT: '1' },
};

export async function startLiveApp(env: Record<string, string>, role: ProcessRole = 'all'): Promise<LiveApp> {
  const coinbase: HttpDouble = await startHttpDouble((req) => {
    const fiat = new URL(req.url, 'http://x').searchParams.get('currency') ?? 'EUR';
    return { body: coinbaseRates(fiat, COINBASE_RATES[fiat] ?? {}) };
  });
  const dir = mkdtempSync(join(tmpdir(), 'kassa-live-'));
  const mnemonicFile = join(dir, 'mnemonic');
  writeFileSync(mnemonicFile, `${TEST_MNEMONIC}\n`, { mode: 0o600 });
  const receiver = await new Receiver().start();
  const fullEnv = testEnv({
    KASSA_SANDBOX: 'false',
    KASSA_RATE_SOURCES: 'coinbase',
    KASSA_RATES_COINBASE_URL: coinbase.url,
    KASSA_RATES_MIN_SOURCES: '1',
    KASSA_SANCTIONS_SOURCES: 'ofac',
    KASSA_SIGNER_MNEMONIC_FILE: mnemonicFile,
    KASSA_CHAIN_POLL_MS: '3600000',
    // The callback receiver listens on 127.0.0.1, refused by default outside sandbox.
    KASSA_ALLOW_PRIVATE_CALLBACK_URLS: 'true',
    ...env,
  });
  const t = await startTestApp({
    env: fullEnv,
    business: { paymentCallbackUrl: receiver.url('/payments'), withdrawalCallbackUrl: receiver.url('/withdrawals') },
    deps: (config, db, now) => buildLiveDeps(config, db, parseMasterKey(TEST_MASTER_KEY), role, { now, env: fullEnv, startAttempts: 1 }),
  });
  await importSanctionsList(t.deps.database, SDN_FILE);
  await t.deps.background.find((b) => b.name === 'rates refresher')!.runOnce();
  const worker = await startTestWorker(t.deps);
  const scan = async (network: string) => {
    const task = t.deps.background.find((b) => b.name === `${network} scanner`);
    if (!task) throw new Error(`no scanner for ${network}`);
    await task.runOnce();
  };
  return {
    ...t,
    worker,
    receiver,
    scan,
    payouts: async () => {
      await t.deps.background.find((b) => b.name === 'payouts')!.runOnce();
    },
    mnemonicFile,
    env: fullEnv,
    stop: async () => {
      await worker.stop();
      await t.close();
      await receiver.stop();
      await coinbase.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
