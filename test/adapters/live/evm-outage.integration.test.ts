/**
 * A node outage in live mode (CONTRACT §10): anvil stops, /ready answers 503
 * naming the network, a deposit made just before is not lost, and after
 * the node returns on its saved state it is found and credited. Also: the
 * web and worker roles never open the signer's mnemonic file, and the
 * signer refuses a mnemonic that does not derive the configured xpub.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWalletClient, http, parseEther, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openLiveChains, type ProcessRole } from '../../../server/adapters/chain/live/live-chains.js';
import { LiveChainConfigError, readLiveChainConfig } from '../../../server/adapters/chain/live/live-config.js';
import { chooseCurrency } from '../../../server/modules/payments/index.js';
import { testXpub } from '../../helpers/watch-only.js';
import { ANVIL_MNEMONIC, startAnvil, type Anvil } from '../evm/anvil.js';
import { startLiveApp, type LiveApp } from './live-app.js';
import { deployTestToken } from '../evm/erc20.js';

let dir: string;
let anvil: Anvil;
let app: LiveApp;
let tokens: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kassa-outage-'));
  anvil = await startAnvil(['--state', join(dir, 'chain.json')]);
  const funder = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  tokens = `USDT=${(await deployTestToken(funder, anvil.client, 6)).address}`;
  app = await startLiveApp({ KASSA_ETH_RPC_URL: anvil.url, KASSA_ETH_XPUB: testXpub('ETH'), KASSA_ETH_CONFIRMATIONS: '2', KASSA_ETH_TOKENS: tokens });
  await app.scan('ETH');
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a node outage', () => {
  test('makes /ready fail, and after the node returns the deposit made before it is credited', async () => {
    const created = await app.signed('POST', '/v1/payments', {
      clientPaymentId: 'outage-1', businessId: app.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '25.00',
    });
    const id = created.json().paymentInfo.paymentId as string;
    const { walletAddress } = await chooseCurrency(app.deps, id, { depositCurrency: 'ETH', network: 'ETH' });
    const funder = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
    const hash = await funder.sendTransaction({ account: funder.account!, chain: null, to: walletAddress as Hex, value: parseEther('0.01') });
    await anvil.mined(hash);
    await anvil.mine(2);

    const port = anvil.port;
    await anvil.stop();
    const down = await app.app.inject({ url: '/ready' });
    expect(down.statusCode).toBe(503);
    expect(down.headers['retry-after']).toBe('5');
    expect(down.json()).toMatchObject({ status: 'not_ready', database: 'up', networks: { ETH: { ok: false } } });
    await expect(app.scan('ETH')).rejects.toThrow();
    const [none] = await app.db.sql`select count(*)::int as n from deposits where payment_id = ${id}`;
    expect(none!.n).toBe(0);

    anvil = await startAnvil(['--state', join(dir, 'chain.json')], port);
    await app.scan('ETH');
    const read = (await app.signed('GET', `/v1/payments/${id}`)).json();
    expect(read.status).toBe('DEPOSITED');
    expect(read.deposits.map((d: { transactionId: string; status: string }) => [d.transactionId, d.status])).toEqual([[hash, 'CONFIRMED']]);
    expect((await app.app.inject({ url: '/ready' })).statusCode).toBe(200);
  });
});

describe('a node down at start', () => {
  test('Kassa starts without its network (503 NETWORK_UNAVAILABLE, /ready 503 naming it) and opens it once the node answers', async () => {
    // A port nothing listens on, which the node then takes.
    const port = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const late = await startLiveApp({ KASSA_ETH_RPC_URL: `http://127.0.0.1:${port}`, KASSA_ETH_XPUB: testXpub('ETH'), KASSA_ETH_TOKENS: tokens });
    let node: Anvil | undefined;
    try {
      const create = (clientPaymentId: string) =>
        late.signed('POST', '/v1/payments', {
          clientPaymentId, businessId: late.business.businessId, locale: 'en', depositCurrency: 'ETH', network: 'ETH', depositAmount: '0.01',
        });
      const refused = await create('late-1');
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe('10');
      expect(refused.json()).toMatchObject({ code: 'NETWORK_UNAVAILABLE' });
      expect(refused.json().detail).toMatch(/^ETH's node has not answered since Kassa started/);
      // A token it is configured for waits with it; one it is not configured for is refused as it will be once the node answers.
      const token = (depositCurrency: string) =>
        late.signed('POST', '/v1/payments', {
          clientPaymentId: `late-${depositCurrency}`, businessId: late.business.businessId, locale: 'en', depositCurrency, network: 'ETH', depositAmount: '10',
        });
      expect((await token('USDT')).statusCode).toBe(503);
      const usdc = await token('USDC');
      expect(usdc.statusCode, usdc.body).toBe(422);
      expect(usdc.json()).toMatchObject({ code: 'NETWORK_NOT_ENABLED', detail: 'USDC on ETH is not enabled on this installation (enabled networks: none).' });
      const ready = await late.app.inject({ url: '/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().networks.ETH).toMatchObject({ ok: false, height: null });
      expect(ready.json().networks.ETH.error).toMatch(/ETH node at KASSA_ETH_RPC_URL/);
      const currencies = (await late.signed('GET', '/v1/currencies')).json().currencies as { networks: unknown[] }[];
      expect(currencies.flatMap((c) => c.networks)).toEqual([]);
      // Its scanner has nothing to scan yet, and says nothing.
      await late.scan('ETH');

      node = await startAnvil([], port);
      // The same deployer's first transaction: the token lands at the address KASSA_ETH_TOKENS names.
      const deployer = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(node.url) });
      expect(`USDT=${(await deployTestToken(deployer, node.client, 6)).address}`).toBe(tokens);
      await late.deps.background.find((b) => b.name === 'reconnect')!.runOnce();
      const created = await create('late-2');
      expect(created.statusCode, created.body).toBe(200);
      expect((await late.app.inject({ url: '/ready' })).statusCode).toBe(200);
      await late.scan('ETH');
      expect((await late.app.inject({ url: '/ready' })).json().networks.ETH).toMatchObject({ ok: true, lag: 0 });
    } finally {
      await late.stop();
      await node?.stop();
    }
  });
});

describe('keys', () => {
  const open = (role: ProcessRole, mnemonicFile: string, xpub = testXpub('ETH')) =>
    openLiveChains(readLiveChainConfig({ KASSA_ETH_RPC_URL: anvil.url, KASSA_ETH_XPUB: xpub, KASSA_ETH_TOKENS: tokens, KASSA_SIGNER_MNEMONIC_FILE: mnemonicFile }), {
      sql: app.db.sql,
      sink: async () => {},
      role,
      onError: () => {},
      startAttempts: 1,
    });

  test('web and worker never open the mnemonic file (a path to nothing starts them); the signer needs it', async () => {
    const missing = join(dir, 'no-such-mnemonic');
    for (const role of ['web', 'worker'] as const) {
      const chains = await open(role, missing);
      expect(chains.signs).toBe(false);
      expect(chains.access.enabled).toEqual(['ETH']);
    }
    await expect(open('signer', missing)).rejects.toThrow(/no-such-mnemonic/);
  });

  test('the catalog’s mainnet token contracts on a test chain are refused at start, naming KASSA_ETH_TOKENS', async () => {
    const config = readLiveChainConfig({ KASSA_ETH_RPC_URL: anvil.url, KASSA_ETH_XPUB: testXpub('ETH') });
    await expect(openLiveChains(config, { sql: app.db.sql, sink: async () => {}, role: 'web', onError: () => {}, startAttempts: 1 })).rejects.toThrow(
      /KASSA_ETH_TOKENS: no USDT contract at 0xdAC17F958D2ee523a2206206994597C13D831ec7/,
    );
  });

  test('the signer refuses a file others may read, and a mnemonic that does not derive the xpub', async () => {
    const loose = join(dir, 'loose');
    writeFileSync(loose, `${ANVIL_MNEMONIC}\n`, { mode: 0o644 });
    await expect(open('signer', loose)).rejects.toThrow(/0644|0600/);
    const other = join(dir, 'other');
    writeFileSync(other, `${ANVIL_MNEMONIC}\n`, { mode: 0o600 });
    await expect(open('signer', other)).rejects.toThrow(/does not derive KASSA_ETH_XPUB/);
    const right = await open('signer', app.mnemonicFile);
    expect(right.signs).toBe(true);
  });

  test('a wrong, exposed or missing mnemonic file is refused before any node is called, naming the file, not the node', async () => {
    const other = join(dir, 'other-2');
    writeFileSync(other, `${ANVIL_MNEMONIC}\n`, { mode: 0o600 });
    const loose = join(dir, 'loose-2');
    writeFileSync(loose, `${ANVIL_MNEMONIC}\n`, { mode: 0o644 });
    // No node listens here, and the default start-up retries apply: were the node called first, the
    // error would name KASSA_ETH_RPC_URL after its retries.
    const dead = 'http://127.0.0.1:9/';
    const refused = async (mnemonicFile: string, xpub = testXpub('ETH')) => {
      const config = readLiveChainConfig({ KASSA_ETH_RPC_URL: dead, KASSA_ETH_XPUB: xpub, KASSA_ETH_TOKENS: tokens, KASSA_SIGNER_MNEMONIC_FILE: mnemonicFile });
      const error = await openLiveChains(config, { sql: app.db.sql, sink: async () => {}, role: 'signer', onError: () => {} }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(LiveChainConfigError);
      expect(error!.message).not.toMatch(/KASSA_ETH_RPC_URL|node/);
      return error!.message;
    };
    expect(await refused(other)).toMatch(/^KASSA_SIGNER_MNEMONIC_FILE: does not derive KASSA_ETH_XPUB/);
    expect(await refused(loose)).toMatch(/^KASSA_SIGNER_MNEMONIC_FILE: .*loose-2 has mode 0644; it must be 0600/);
    expect(await refused(join(dir, 'nothing-here'))).toMatch(/^KASSA_SIGNER_MNEMONIC_FILE: ENOENT.*nothing-here/);
    // An xpub that does not parse is named as the setting it is, in the signer as in the other roles.
    const broken = `${testXpub('ETH').slice(0, -1)}0`;
    expect(await refused(other, broken)).toMatch(/^KASSA_ETH_XPUB: extended public key: not base58check/);
    const web = await openLiveChains(readLiveChainConfig({ KASSA_ETH_RPC_URL: dead, KASSA_ETH_XPUB: broken }), {
      sql: app.db.sql, sink: async () => {}, role: 'web', onError: () => {},
    }).then(() => null, (e: unknown) => e as Error);
    expect(web).toBeInstanceOf(LiveChainConfigError);
    expect(web!.message).toBe('KASSA_ETH_XPUB: extended public key: not base58check');
  });
});
