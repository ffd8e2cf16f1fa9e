/**
 * A real node outage: anvil is stopped (its chain kept in a state file) and
 * restarted on the same port. The scanner errors and keeps its cursor, the
 * signer keeps its stored transaction; after the restart nothing is lost.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createWalletClient, http, parseEther, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { addressBook } from '../../../server/adapters/chain/evm/keys.js';
import { createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { EvmScanner } from '../../../server/adapters/chain/evm/scanner.js';
import { openEvmSigner } from '../../../server/adapters/chain/evm/signer.js';
import type { DepositReport } from '../../../server/adapters/chain/evm/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ANVIL_MNEMONIC, startAnvil, until, type Anvil } from './anvil.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/60'/0'").publicExtendedKey;
const book = addressBook(XPUB);

let anvil: Anvil;
let database: TestDatabase;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kassa-outage-'));
  [anvil, database] = await Promise.all([startAnvil(['--state', join(dir, 'chain.json')]), createTestDatabase()]);
});

afterAll(async () => {
  await anvil?.stop();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('node stopped and restarted: the scanner fails meanwhile, keeps its cursor, and then loses nothing; a payout signed during the outage is sent after it with its stored hash', async () => {
  const reports: DepositReport[] = [];
  const client = createEvmClient(anvil.url, { retryCount: 0, timeoutMs: 1_000 });
  const scanner = new EvmScanner({
    sql: database.sql, network: 'ETH', client, watched: new Set([book.depositAddress(0).toLowerCase()]), tokens: [],
    confirmations: 2, sink: async (r) => void reports.push(r), startHeight: 1n,
  });
  await scanner.tick();
  const funder = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  const deposit = await funder.sendTransaction({ account: funder.account!, chain: null, to: book.depositAddress(0), value: parseEther('0.4') });
  await anvil.mined(deposit);
  const mnemonicFile = join(dir, 'mnemonic');
  writeFileSync(mnemonicFile, MNEMONIC, { mode: 0o600 });
  const signer = await openEvmSigner({ sql: database.sql, network: 'ETH', client, mnemonicFile, xpub: XPUB, tokens: [] });
  await anvil.setBalance(signer.treasury, parseEther('3'));
  const signed = await signer.signPayout({ id: 'w-outage', network: 'ETH', currency: 'ETH', toAddress: book.depositAddress(5), amount: '1' });
  const before = await scanner.status();

  // The node goes away with the deposit unscanned and the payout not broadcast.
  const port = anvil.port;
  await anvil.stop();
  await expect(scanner.tick()).rejects.toThrow();
  await expect(signer.payout({ id: 'w-outage', network: 'ETH', currency: 'ETH', toAddress: book.depositAddress(5), amount: '1' })).rejects.toThrow();
  const during = await scanner.status();
  expect(during.height).toBe(before.height);
  expect(during.lastScanAt).toEqual(before.lastScanAt);
  expect(reports).toEqual([]);

  // Back, same chain, same port: the same scanner and signer objects carry on.
  anvil = await startAnvil(['--state', join(dir, 'chain.json')], port);
  expect((await anvil.client.getTransactionReceipt({ hash: deposit })).status).toBe('success');
  await anvil.mine(1);
  await scanner.tick();
  expect(reports.map((r) => [r.state, r.txHash, r.amount])).toEqual([
    ['SEEN', deposit, '0.4'],
    ['CONFIRMED', deposit, '0.4'],
  ]);
  expect(await signer.tendPending(600_000)).toBe(1);
  const mined = await until(() => signer.refresh('w-outage'), (r) => r.status === 'MINED');
  expect(signed.status).toBe('SIGNED');
  expect(mined.status === 'MINED' && signed.status === 'SIGNED' && mined.txHash === signed.txHash).toBe(true);
  expect(await anvil.client.getBalance({ address: book.depositAddress(5) as Hex })).toBe(parseEther('1'));
});
