/**
 * The signer against a real anvil and PostgreSQL: payouts (native, token),
 * idempotent retries, a crash between store and broadcast, a fee bump by
 * replacement, held payouts, and sweeps (native; token after a gas top-up).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createWalletClient, http, keccak256, parseEther, parseTransaction, type Hex, type WalletClient } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addressBook } from '../../../server/adapters/chain/evm/keys.js';
import { createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { EvmScanner } from '../../../server/adapters/chain/evm/scanner.js';
import { openEvmSigner, type EvmSigner, type SignerOptions } from '../../../server/adapters/chain/evm/signer.js';
import type { DepositReport } from '../../../server/adapters/chain/evm/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ANVIL_MNEMONIC, startAnvil, until, type Anvil } from './anvil.js';
import { deployTestToken } from './erc20.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/60'/0'").publicExtendedKey;
const book = addressBook(XPUB);
const ERC20_READ = [
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'o', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] },
] as const;

let anvil: Anvil;
let database: TestDatabase;
let dir: string;
let mnemonicFile: string;
let funder: WalletClient;
let token: { address: Hex; abi: readonly unknown[] };
let signer: EvmSigner;

function options(overrides: Partial<SignerOptions> = {}): SignerOptions {
  return {
    sql: database.sql,
    network: 'ETH',
    client: createEvmClient(anvil.url, { retryCount: 0 }),
    mnemonicFile,
    xpub: XPUB,
    tokens: [{ currency: 'USDT', address: token.address }],
    ...overrides,
  };
}

const usdtOf = (address: Hex) => anvil.client.readContract({ address: token.address, abi: ERC20_READ, functionName: 'balanceOf', args: [address] });
const ethOf = (address: Hex) => anvil.client.getBalance({ address });
const fresh = () => `0x${Math.random().toString(16).slice(2).padEnd(40, '7')}` as Hex;

beforeAll(async () => {
  [anvil, database] = await Promise.all([startAnvil(), createTestDatabase()]);
  dir = mkdtempSync(join(tmpdir(), 'kassa-signer-'));
  mnemonicFile = join(dir, 'mnemonic');
  writeFileSync(mnemonicFile, `${MNEMONIC}\n`, { mode: 0o600 });
  funder = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  token = await deployTestToken(funder, anvil.client);
  signer = await openEvmSigner(options());
  await anvil.setBalance(signer.treasury, parseEther('10'));
  await anvil.mined(await funder.writeContract({ account: funder.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'mint', args: [signer.treasury, 100_000_000n] } as never));
});

/** Refresh until the transaction is mined (automine mines just after answering the broadcast). */
const settled = (s: EvmSigner, id: string) => until(() => s.refresh(id), (r) => r.status === 'MINED');

afterAll(async () => {
  await anvil?.stop();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function storedRow(id: string) {
  const [row] = await database.sql<{ status: string; tx_hash: Hex; raw_tx: Hex; nonce: string; amount_base: string }[]>`
    select status, tx_hash, raw_tx, nonce, amount_base from evm_transactions where id = ${id}`;
  return row!;
}

describe('EVM signer on anvil', () => {
  test('refuses a mnemonic file others can read, and a mnemonic that is not behind the xpub', async () => {
    const loose = join(dir, 'loose');
    writeFileSync(loose, MNEMONIC, { mode: 0o644 });
    await expect(openEvmSigner(options({ mnemonicFile: loose }))).rejects.toThrow(/mode 0644; it must be 0600/);
    const otherXpub = HDKey.fromMasterSeed(mnemonicToSeedSync(ANVIL_MNEMONIC)).derive("m/44'/60'/0'").publicExtendedKey;
    await expect(openEvmSigner(options({ xpub: otherXpub }))).rejects.toThrow(/does not derive KASSA_ETH_XPUB/);
    expect(signer.treasury).toBe(book.treasuryAddress());
  });

  test('a native payout is signed once, stored, broadcast and mined with the stored hash; a retry sends nothing new', async () => {
    const to = fresh();
    const result = await signer.payout({ id: 'w-eth-1', network: 'ETH', currency: 'ETH', toAddress: to, amount: '1.5' });
    expect(result.status).toBe('SENT');
    const row = await storedRow('w-eth-1');
    expect(row.tx_hash).toBe(keccak256(row.raw_tx));
    expect(result.status === 'SENT' && result.txHash).toBe(row.tx_hash);
    expect(parseTransaction(row.raw_tx)).toMatchObject({ type: 'eip1559', nonce: 0, to: to.toLowerCase(), value: parseEther('1.5') });
    const receipt = await anvil.client.waitForTransactionReceipt({ hash: row.tx_hash, pollingInterval: 50 });
    expect(receipt.status).toBe('success');
    expect(await ethOf(to)).toBe(parseEther('1.5'));
    const again = await signer.payout({ id: 'w-eth-1', network: 'ETH', currency: 'ETH', toAddress: to, amount: '1.5' });
    expect(again.status !== 'HELD' && again.txHash).toBe(row.tx_hash);
    expect(await anvil.client.getTransactionCount({ address: signer.treasury })).toBe(1);
    expect(await ethOf(to)).toBe(parseEther('1.5'));
    expect(await signer.refresh('w-eth-1')).toMatchObject({ status: 'MINED', txHash: row.tx_hash, success: true, blockNumber: receipt.blockNumber });
  });

  test('a token payout transfers exactly the amount in base units', async () => {
    const to = fresh();
    const result = await signer.payout({ id: 'w-usdt-1', network: 'ETH', currency: 'USDT', toAddress: to, amount: '2.5' });
    expect(result.status).toBe('SENT');
    const refreshed = await settled(signer, 'w-usdt-1');
    expect(refreshed).toMatchObject({ status: 'MINED', success: true });
    expect(await usdtOf(to)).toBe(2_500_000n);
    expect((await storedRow('w-usdt-1')).amount_base).toBe('2500000');
  });

  test('too little in the treasury: HELD with what is missing, no nonce used; the same id pays once funded', async () => {
    const to = fresh();
    const nonceBefore = await anvil.client.getTransactionCount({ address: signer.treasury });
    const held = await signer.payout({ id: 'w-big', network: 'ETH', currency: 'ETH', toAddress: to, amount: '1000' });
    expect(held).toMatchObject({ status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: 'ETH', available: await ethOf(signer.treasury) });
    expect(held.status === 'HELD' && held.needed > parseEther('1000')).toBe(true);
    expect((await storedRow('w-big')).status).toBe('HELD');
    const tokenHeld = await signer.payout({ id: 'w-big-usdt', network: 'ETH', currency: 'USDT', toAddress: to, amount: '1000000' });
    expect(tokenHeld).toMatchObject({ status: 'HELD', currency: 'USDT', needed: 1_000_000_000_000n, available: 97_500_000n });
    const [nonceRow] = await database.sql<{ next_nonce: string }[]>`select next_nonce from evm_nonces where address = ${signer.treasury}`;
    expect(Number(nonceRow!.next_nonce)).toBe(nonceBefore);
    await anvil.setBalance(signer.treasury, parseEther('2000'));
    const paid = await signer.payout({ id: 'w-big', network: 'ETH', currency: 'ETH', toAddress: to, amount: '1000' });
    expect(paid.status).toBe('SENT');
    await settled(signer, 'w-big');
    expect(await ethOf(to)).toBe(parseEther('1000'));
  });

  test('payouts sent but not yet mined count against the treasury: the one it cannot also cover is HELD, not sent to block every later nonce', async () => {
    const [to1, to2] = [fresh(), fresh()];
    await anvil.setBalance(signer.treasury, parseEther('10'));
    await anvil.rpc('evm_setAutomine', [false]);
    let heldP2: Awaited<ReturnType<typeof signer.payout>>;
    try {
      const p1 = await signer.payout({ id: 'w-inflight-1', network: 'ETH', currency: 'ETH', toAddress: to1, amount: '6' });
      expect(p1.status).toBe('SENT');
      const [nonceAfterP1] = await database.sql<{ next_nonce: string }[]>`select next_nonce from evm_nonces where address = ${signer.treasury}`;
      // The latest block still shows 10 ETH; 6 of them (and p1's gas) are already promised.
      heldP2 = await signer.payout({ id: 'w-inflight-2', network: 'ETH', currency: 'ETH', toAddress: to2, amount: '6' });
      expect(heldP2).toMatchObject({ status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: 'ETH' });
      expect(heldP2.status === 'HELD' && heldP2.available < parseEther('4')).toBe(true);
      expect((await storedRow('w-inflight-2')).status).toBe('HELD');
      const [nonceAfterP2] = await database.sql<{ next_nonce: string }[]>`select next_nonce from evm_nonces where address = ${signer.treasury}`;
      expect(nonceAfterP2!.next_nonce).toBe(nonceAfterP1!.next_nonce);
      await anvil.mine(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
    await settled(signer, 'w-inflight-1');
    expect(await ethOf(to1)).toBe(parseEther('6'));
    // Funded again, the held one is signed with the next nonce and paid once.
    await anvil.setBalance(signer.treasury, parseEther('20'));
    expect((await signer.payout({ id: 'w-inflight-2', network: 'ETH', currency: 'ETH', toAddress: to2, amount: '6' })).status).toBe('SENT');
    await settled(signer, 'w-inflight-2');
    expect(await ethOf(to2)).toBe(parseEther('6'));
  });

  test('a crash between store and broadcast: a new signer rebroadcasts the same raw transaction, same hash', async () => {
    const to = fresh();
    const signed = await signer.signPayout({ id: 'w-crash', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.25' });
    expect(signed.status).toBe('SIGNED');
    const stored = await storedRow('w-crash');
    expect(stored.status).toBe('SIGNED');
    // Never broadcast: the node does not know it.
    await expect(anvil.client.getTransaction({ hash: stored.tx_hash })).rejects.toThrow();
    // "Restart": a new signer over the same database and mnemonic file.
    const restarted = await openEvmSigner(options());
    const result = await restarted.payout({ id: 'w-crash', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.25' });
    expect(result.status !== 'HELD' && result.txHash).toBe(stored.tx_hash);
    expect((await storedRow('w-crash')).raw_tx).toBe(stored.raw_tx);
    const receipt = await anvil.client.waitForTransactionReceipt({ hash: stored.tx_hash, pollingInterval: 50 });
    expect(receipt.transactionHash).toBe(stored.tx_hash);
    expect(await ethOf(to)).toBe(parseEther('0.25'));
    // The generic recovery path too: a stored transaction is sent again by the signer's pass.
    const other = await restarted.signPayout({ id: 'w-crash-2', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.01' });
    expect(await restarted.tendPending(600_000)).toBeGreaterThanOrEqual(1);
    const mined = await settled(restarted, 'w-crash-2');
    expect(mined.status === 'MINED' && other.status === 'SIGNED' && mined.txHash === other.txHash).toBe(true);
  });

  test('fee bump by replacement: same nonce, higher fees, the replacement is mined and recorded', async () => {
    const to = fresh();
    await anvil.rpc('evm_setAutomine', [false]);
    try {
      const first = await signer.payout({ id: 'w-bump', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.3' });
      expect(first.status).toBe('SENT');
      const before = await storedRow('w-bump');
      const bumped = await signer.bumpFee('w-bump');
      const after = await storedRow('w-bump');
      expect(bumped.status !== 'HELD' && bumped.txHash).toBe(after.tx_hash);
      expect(after.tx_hash).not.toBe(before.tx_hash);
      const [a, b] = [parseTransaction(before.raw_tx), parseTransaction(after.raw_tx)];
      expect(b.nonce).toBe(a.nonce);
      expect(b.maxFeePerGas! * 100n >= a.maxFeePerGas! * 110n).toBe(true);
      expect(b.maxPriorityFeePerGas! * 100n >= a.maxPriorityFeePerGas! * 110n).toBe(true);
      await anvil.mine(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
    const mined = await settled(signer, 'w-bump');
    const row = await storedRow('w-bump');
    expect(mined).toMatchObject({ status: 'MINED', txHash: row.tx_hash, success: true });
    const attempts = await database.sql<{ tx_hash: Hex }[]>`select tx_hash from evm_transaction_attempts where transaction_id = 'w-bump'`;
    expect(attempts).toHaveLength(2);
    const original = attempts.find((x) => x.tx_hash !== row.tx_hash)!.tx_hash;
    await expect(anvil.client.getTransactionReceipt({ hash: original })).rejects.toThrow();
    expect(await ethOf(to)).toBe(parseEther('0.3'));
  });

  test('a payout stuck below the base fee: sent again while it has not waited long, then replaced at the market fees and mined', async () => {
    const to = fresh();
    const replaced = async () => (await signer.replacedPayouts()).filter((c) => c.id === 'w-stuck');
    await anvil.rpc('evm_setAutomine', [false]);
    let after: Awaited<ReturnType<typeof storedRow>>;
    try {
      expect((await signer.payout({ id: 'w-stuck', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.2' })).status).toBe('SENT');
      const before = await storedRow('w-stuck');
      // The base fee jumps to four times what it offers: no block takes it.
      const offered = parseTransaction(before.raw_tx).maxFeePerGas!;
      await anvil.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(offered * 4n).toString(16)}`]);
      await anvil.mine(1);
      await signer.tendPending(60_000);
      expect((await storedRow('w-stuck')).tx_hash).toBe(before.tx_hash);
      expect(await replaced()).toEqual([]);
      // A minute later it has waited long enough: replaced, same nonce, at what the market asks now.
      await signer.tendPending(60_000, new Date(Date.now() + 61_000));
      after = await storedRow('w-stuck');
      expect(after.tx_hash).not.toBe(before.tx_hash);
      expect(await replaced()).toEqual([{ id: 'w-stuck', txHash: after.tx_hash }]);
      expect(parseTransaction(after.raw_tx).nonce).toBe(parseTransaction(before.raw_tx).nonce);
      const { baseFeePerGas } = await anvil.client.getBlock();
      expect(parseTransaction(after.raw_tx).maxFeePerGas! > baseFeePerGas!).toBe(true);
      await anvil.mine(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
    expect(await settled(signer, 'w-stuck')).toMatchObject({ status: 'MINED', txHash: after.tx_hash, success: true });
    expect(await ethOf(to)).toBe(parseEther('0.2'));
    // mined: a later pass signs nothing more, and the hash it stands for is the one mined
    await signer.tendPending(0, new Date(Date.now() + 3_600_000));
    const [attempts] = await database.sql<{ n: number }[]>`select count(*)::int as n from evm_transaction_attempts where transaction_id = 'w-stuck'`;
    expect(attempts!.n).toBe(2);
    expect(await replaced()).toEqual([{ id: 'w-stuck', txHash: after.tx_hash }]);
  });

  test('a bump the treasury cannot fund is HELD and signs nothing; one whose nonce is already used only refreshes', async () => {
    const to = fresh();
    await anvil.rpc('evm_setAutomine', [false]);
    try {
      expect((await signer.payout({ id: 'w-poor', network: 'ETH', currency: 'ETH', toAddress: to, amount: '0.4' })).status).toBe('SENT');
      const before = await storedRow('w-poor');
      const balance = await ethOf(signer.treasury);
      await anvil.setBalance(signer.treasury, parseEther('0.4')); // the value, and nothing for dearer gas
      const held = await signer.bumpFee('w-poor');
      expect(held).toMatchObject({ status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: 'ETH' });
      expect((await storedRow('w-poor')).tx_hash).toBe(before.tx_hash);
      const [attempts] = await database.sql<{ n: number }[]>`select count(*)::int as n from evm_transaction_attempts where transaction_id = 'w-poor'`;
      expect(attempts!.n).toBe(1);
      await anvil.setBalance(signer.treasury, balance);
      await anvil.mine(1);
      // mined as it was: a bump now finds its nonce used and only records it mined
      expect(await signer.bumpFee('w-poor')).toMatchObject({ status: 'MINED', txHash: before.tx_hash });
      const [after] = await database.sql<{ n: number }[]>`select count(*)::int as n from evm_transaction_attempts where transaction_id = 'w-poor'`;
      expect(after!.n).toBe(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
  });

  test('native sweep: a deposit address sends everything but the gas to the treasury', async () => {
    const deposit = book.depositAddress(0);
    await anvil.mined(await funder.sendTransaction({ account: funder.account!, chain: null, to: deposit, value: parseEther('0.7') }));
    const treasuryBefore = await ethOf(signer.treasury);
    const result = await signer.sweepNative('sweep-eth-0', 0);
    expect(result.status).toBe('SENT');
    const row = await storedRow('sweep-eth-0');
    const receipt = await anvil.client.waitForTransactionReceipt({ hash: row.tx_hash, pollingInterval: 50 });
    const tx = parseTransaction(row.raw_tx);
    expect(await ethOf(signer.treasury)).toBe(treasuryBefore + tx.value!);
    // What is left is the unused part of the gas reservation, nothing else.
    expect(await ethOf(deposit)).toBe(21_000n * (tx.maxFeePerGas! - receipt.effectiveGasPrice));
    expect(await signer.sweepNative('sweep-eth-0-again', 0)).toEqual({ status: 'NOTHING' });
  });

  test('a transaction of any kind whose block is reorganised away before its depth (a gas top-up here) is sent again by the next pass: its sender\'s later payouts are not held behind it', async () => {
    const deposit = book.depositAddress(7);
    await anvil.mined(await funder.writeContract({ account: funder.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'mint', args: [deposit, 5_000_000n] } as never));
    expect((await signer.sweepToken('sweep-reorged', 7, 'USDT')).status).toBe('GAS_SENT');
    const topUp = await storedRow('sweep-reorged:gas:1');
    expect((await settled(signer, 'sweep-reorged:gas:1')).status).toBe('MINED');
    // Its block is replaced by an empty one and the node forgets it: its nonce is free again on chain.
    await anvil.rpc('anvil_reorg', [1, []]);
    await anvil.rpc('anvil_dropTransaction', [topUp.tx_hash]);
    expect(await anvil.client.getTransactionCount({ address: signer.treasury })).toBe(Number(topUp.nonce));
    // A payout signed meanwhile takes the next nonce: it can only be mined after the top-up is.
    const payout = await signer.payout({ id: 'after-reorged-top-up', network: 'ETH', currency: 'ETH', toAddress: fresh(), amount: '0.01' });
    expect(payout.status !== 'HELD' && payout.nonce).toBe(Number(topUp.nonce) + 1);
    await signer.tendPending(600_000);
    expect((await settled(signer, 'after-reorged-top-up')).status).toBe('MINED');
    // The same top-up, the same bytes, mined again; the payout behind it too.
    expect((await anvil.client.getTransactionReceipt({ hash: topUp.tx_hash })).status).toBe('success');
    expect((await settled(signer, 'sweep-reorged:gas:1')).status).toBe('MINED');
    expect(await anvil.client.getTransactionCount({ address: signer.treasury })).toBe(Number(topUp.nonce) + 2);
  });

  test('token sweep: the treasury first sends just enough gas, then the deposit address sweeps its tokens', async () => {
    const deposit = book.depositAddress(1);
    // A scanner watching the deposit address, told the treasury is Kassa's own sender.
    const reports: DepositReport[] = [];
    const scanner = new EvmScanner({
      sql: database.sql, network: 'ETH', client: createEvmClient(anvil.url, { retryCount: 0 }),
      watched: new Set([deposit.toLowerCase()]), ownSenders: new Set([signer.treasury.toLowerCase()]),
      tokens: [{ currency: 'USDT', address: token.address }], confirmations: 100, sink: async (r) => void reports.push(r),
      startHeight: (await anvil.client.getBlockNumber()) + 1n,
    });
    await scanner.tick();
    await anvil.mined(await funder.writeContract({ account: funder.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'mint', args: [deposit, 40_000_000n] } as never));
    expect(await ethOf(deposit)).toBe(0n);
    const treasuryUsdt = await usdtOf(signer.treasury);
    const first = await signer.sweepToken('sweep-usdt-1', 1, 'USDT');
    expect(first.status).toBe('GAS_SENT');
    const topUp = await storedRow('sweep-usdt-1:gas:1');
    const topUpTx = parseTransaction(topUp.raw_tx);
    await anvil.client.waitForTransactionReceipt({ hash: topUp.tx_hash, pollingInterval: 50 });
    expect(await ethOf(deposit)).toBe(topUpTx.value);
    const second = await signer.sweepToken('sweep-usdt-1', 1, 'USDT');
    expect(second.status).toBe('SENT');
    const sweep = await storedRow('sweep-usdt-1');
    const sweepTx = parseTransaction(sweep.raw_tx);
    // Just enough: the top-up is exactly the sweep's gas limit × max fee.
    expect(topUpTx.value).toBe(sweepTx.gas! * sweepTx.maxFeePerGas!);
    const receipt = await anvil.client.waitForTransactionReceipt({ hash: sweep.tx_hash, pollingInterval: 50 });
    expect(receipt.status).toBe('success');
    expect(await usdtOf(deposit)).toBe(0n);
    expect(await usdtOf(signer.treasury)).toBe(treasuryUsdt + 40_000_000n);
    expect(await ethOf(deposit)).toBe(topUpTx.value! - receipt.gasUsed * receipt.effectiveGasPrice);
    // The customer's 40 USDT is the only deposit seen; the treasury's gas top-up is not one.
    await scanner.tick();
    expect(reports.map((r) => `${r.state} ${r.currency} ${r.amount}`)).toEqual(['SEEN USDT 40']);
    // Idempotent: the same sweep id answers with the same transaction.
    const third = await signer.sweepToken('sweep-usdt-1', 1, 'USDT');
    expect(third.status !== 'HELD' && 'txHash' in third && third.txHash).toBe(sweep.tx_hash);
  });
});
