/**
 * Native balance reconciliation on anvil: value paid by a contract's internal
 * call is invisible to the block scan but shows as unexplained balance; an
 * address whose deposit was scanned and then swept (fees included) is fully
 * explained.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createWalletClient, http, parseEther, type WalletClient } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { addressBook } from '../../../server/adapters/chain/evm/keys.js';
import { reconcileNative } from '../../../server/adapters/chain/evm/reconcile.js';
import { createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { EvmScanner } from '../../../server/adapters/chain/evm/scanner.js';
import { openEvmSigner } from '../../../server/adapters/chain/evm/signer.js';
import type { DepositReport } from '../../../server/adapters/chain/evm/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ANVIL_MNEMONIC, startAnvil, until, type Anvil } from './anvil.js';
import { deployForwarder } from './erc20.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/60'/0'").publicExtendedKey;
const book = addressBook(XPUB);

let anvil: Anvil;
let database: TestDatabase;
let dir: string;
let wallet: WalletClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kassa-reconcile-'));
  [anvil, database] = await Promise.all([startAnvil(), createTestDatabase()]);
  wallet = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
});

afterAll(async () => {
  await anvil?.stop();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('an internal-call payment is unexplained balance; a scanned and swept deposit is explained to the wei', async () => {
  const client = createEvmClient(anvil.url, { retryCount: 0 });
  const [viaContract, plain] = [book.depositAddress(0), book.depositAddress(1)];
  const reports: DepositReport[] = [];
  const scanner = new EvmScanner({
    sql: database.sql, network: 'ETH', client, watched: new Set([viaContract.toLowerCase(), plain.toLowerCase()]),
    ownSenders: new Set([book.treasuryAddress().toLowerCase()]), tokens: [], confirmations: 1,
    sink: async (r) => void reports.push(r), startHeight: (await anvil.client.getBlockNumber()) + 1n,
  });
  await scanner.tick();

  const forwarder = await deployForwarder(wallet, anvil.client);
  await anvil.mined(await wallet.writeContract({ account: wallet.account!, chain: null, address: forwarder.address, abi: forwarder.abi as never, functionName: 'forward', args: [viaContract], value: parseEther('0.05') } as never));
  await anvil.mined(await wallet.sendTransaction({ account: wallet.account!, chain: null, to: plain, value: parseEther('0.2') }));
  await scanner.tick();
  // The block scan sees the direct payment only.
  expect(reports.map((r) => `${r.state} ${r.toAddress} ${r.amount}`)).toEqual([`SEEN ${plain} 0.2`, `CONFIRMED ${plain} 0.2`]);

  // Sweep the plain one: its balance is then the gas reservation left over, which the recorded fee explains.
  const mnemonicFile = join(dir, 'mnemonic');
  writeFileSync(mnemonicFile, MNEMONIC, { mode: 0o600 });
  const signer = await openEvmSigner({ sql: database.sql, network: 'ETH', client, mnemonicFile, xpub: XPUB, tokens: [] });
  expect((await signer.sweepNative('sweep-1', 1)).status).toBe('SENT');
  expect((await until(() => signer.refresh('sweep-1'), (r) => r.status === 'MINED')).status).toBe('MINED');
  await scanner.tick();

  const [contractPaid, swept] = await reconcileNative({ sql: database.sql, network: 'ETH', client, addresses: [viaContract, plain] });
  expect(contractPaid).toMatchObject({ address: viaContract, balance: parseEther('0.05'), expected: 0n, unexplained: parseEther('0.05') });
  expect(swept!.unexplained).toBe(0n);
  expect(swept!.balance).toBeGreaterThan(0n);
  expect(swept!.expected).toBe(swept!.balance);
});
