/**
 * Payouts from tracked UTXOs against a real Litecoin Core regtest node and a real PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../../helpers/db.js';
import { filesWithModes } from '../../helpers/owned-files.js';
import { litecoindAvailable, type Litecoind } from './litecoind.js';
import { MNEMONIC, startLtcWallet } from './fixtures.js';
import { AccountKeys } from '../../../server/adapters/chain/utxo/keys.js';
import type { ResolvedParams } from '../../../server/adapters/chain/utxo/params.js';
import { findPayout } from '../../../server/adapters/chain/utxo/store.js';
import { UtxoScanner } from '../../../server/adapters/chain/utxo/scanner.js';
import { UtxoSigner, RBF_SEQUENCE } from '../../../server/adapters/chain/utxo/signer.js';
import { PayoutBroadcastError, PayoutConflictError, UtxoWallet } from '../../../server/adapters/chain/utxo/wallet.js';
import { InsufficientFundsError } from '../../../server/adapters/chain/utxo/wallet.rules.js';
import { RpcClient, RpcUnavailableError } from '../../../server/adapters/chain/utxo/rpc.js';
import { fromBaseUnits, toBaseUnits } from '../../../server/adapters/chain/utxo/amounts.js';

const available = litecoindAvailable();
const mnemonicFile = filesWithModes('kassa-signer-');

/** The real client, except that broadcasts time out: the node never gets the transaction. */
class BroadcastTimesOut extends RpcClient {
  override async call<T>(method: string, params: unknown[] = []): Promise<T> {
    if (method === 'sendrawtransaction') throw new RpcUnavailableError(method, 'timeout', 'injected');
    return super.call<T>(method, params);
  }
}

type NodeTx = { txid: string; vin: { txid: string; vout: number; sequence: number }[]; vout: { n: number; value: string; scriptPubKey: { addresses?: string[] } }[] };

describe.skipIf(!available)('UTXO wallet on a Litecoin regtest node', () => {
  let node: Litecoind;
  let db: TestDatabase;
  let params: ResolvedParams;
  let keys: AccountKeys;
  let scanner: UtxoScanner;
  let wallet: UtxoWallet;
  let signer: UtxoSigner;
  let payee: RpcClient;

  beforeAll(async () => {
    ({ node, db, params, keys, signer, scanner, payee } = await startLtcWallet(mnemonicFile('mnemonic', `${MNEMONIC}\n`, 0o600)));
    wallet = new UtxoWallet({ rpc: node.rpc, sql: db.sql, keys, params, signer });
    await node.pay(keys.depositAddress(0).address, '1');
    await node.pay(keys.depositAddress(1).address, '0.7');
    await node.mine(6);
    await scanner.scan();
  });
  afterAll(async () => {
    await node?.stop();
    await db?.drop();
  });

  it('pays from tracked UTXOs with the stored txid, change to <xpub>/1/i, fallback fee rate and RBF', async () => {
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash } = await wallet.payout({ id: 'w-1', network: 'LTC', currency: 'LTC', toAddress: to, amount: '1.2' });
    const stored = await findPayout(db.sql, 'LTC', 'w-1');
    expect(stored!.txid).toBe(txHash);
    expect(stored!.broadcastAt).not.toBeNull();

    const tx = await node.rpc.call<NodeTx>('getrawtransaction', [txHash, true]);
    const change = keys.derive(1, 1).address;
    const outs = tx.vout.map((o) => [o.scriptPubKey.addresses?.[0], o.value]);
    expect(outs).toContainEqual([to, '1.20000000']);
    const changeOut = tx.vout.find((o) => o.scriptPubKey.addresses?.[0] === change)!;
    expect(changeOut).toBeDefined();
    expect(tx.vout).toHaveLength(2);
    // both deposits were needed (1 + 0.7 ≥ 1.2 + fee): inputs − outputs is exactly the stored fee
    expect(tx.vin).toHaveLength(2);
    expect(toBaseUnits('1.7') - toBaseUnits('1.2') - toBaseUnits(changeOut.value)).toBe(stored!.fee);
    expect(tx.vin.every((v) => v.sequence === RBF_SEQUENCE)).toBe(true);

    const entry = await node.rpc.call<{ vsize: number; fees: { base: string }; 'bip125-replaceable': boolean }>('getmempoolentry', [txHash]);
    expect(entry['bip125-replaceable']).toBe(true);
    expect(toBaseUnits(entry.fees.base)).toBe(stored!.fee);
    // a fresh regtest has no estimate: the 10 sat/vB fallback applies
    const rate = (stored!.fee * 1000n) / BigInt(entry.vsize);
    expect(rate).toBeGreaterThanOrEqual(10_000n);
    expect(rate).toBeLessThan(11_000n);

    // The same id again: the same transaction, rebroadcast; and the stored raw tx itself gives the same txid.
    expect((await wallet.payout({ id: 'w-1', network: 'LTC', currency: 'LTC', toAddress: to, amount: '1.2' })).txHash).toBe(txHash);
    expect(await node.rpc.call<string>('sendrawtransaction', [stored!.rawTx])).toBe(txHash);

    await node.mine(1);
    await scanner.scan();
    const received = await payee.call<{ txid: string; amount: string; confirmations: number }[]>('listunspent', [1, 9999, [to]]);
    expect(received).toEqual([expect.objectContaining({ txid: txHash, amount: '1.20000000', confirmations: 1 })]);
    // after mining, the rebroadcast is "already in chain" and still answers the same txid
    expect((await wallet.payout({ id: 'w-1', network: 'LTC', currency: 'LTC', toAddress: to, amount: '1.2' })).txHash).toBe(txHash);

    const rows = await db.sql<{ txid: string; vout: number; branch: number; idx: number; spent_by: string | null; block_height: number | null }[]>`
      select txid, vout, branch, idx, spent_by, block_height from utxo_outputs where network = 'LTC' order by branch, idx`;
    expect(rows.filter((r) => r.branch === 0).every((r) => r.spent_by === txHash)).toBe(true);
    expect(rows.filter((r) => r.branch === 1)).toEqual([
      { txid: txHash, vout: changeOut.n, branch: 1, idx: 1, spent_by: null, block_height: expect.any(Number) },
    ]);
  });

  it('stores the signed transaction before broadcasting and only ever rebroadcasts it', async () => {
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const failing = new UtxoWallet({ rpc: new BroadcastTimesOut(node.url), sql: db.sql, keys, params, signer });
    const request = { id: 'w-2', network: 'LTC' as const, currency: 'LTC', toAddress: to, amount: '0.1' };
    const error = await failing.payout(request).catch((e) => e);
    expect(error).toBeInstanceOf(PayoutBroadcastError);
    const stored = await findPayout(db.sql, 'LTC', 'w-2');
    expect(stored!.txid).toBe(error.txHash);
    expect(stored!.broadcastAt).toBeNull();
    expect(await node.rpc.call<string[]>('getrawmempool')).not.toContain(stored!.txid);

    // The retry does not re-pick inputs: it sends the stored raw transaction.
    const { txHash } = await wallet.payout(request);
    expect(txHash).toBe(stored!.txid);
    expect(await node.rpc.call<string[]>('getrawmempool')).toContain(txHash);
    const raw = await node.rpc.call<string>('getrawtransaction', [txHash, false]);
    expect(raw).toBe(stored!.rawTx);
    // it spent the change of the first payout (the only spendable output left), change to /1/2
    const tx = await node.rpc.call<NodeTx>('getrawtransaction', [txHash, true]);
    expect(tx.vout.map((o) => o.scriptPubKey.addresses?.[0])).toContain(keys.derive(1, 2).address);
  });

  it('recognises its mined payout on rebroadcast even after every output of it was spent', async () => {
    const first = (await findPayout(db.sql, 'LTC', 'w-1'))!;
    await node.mine(1);
    await scanner.scan();
    // w-2 spent the change of w-1; now the payee spends its output too
    const coins = await payee.call<{ amount: string }[]>('listunspent', [1]);
    const balance = coins.reduce((sum, c) => sum + toBaseUnits(c.amount), 0n);
    expect(balance).toBe(toBaseUnits('1.3')); // w-1 and w-2
    await payee.call('sendtoaddress', [node.funderAddress, fromBaseUnits(balance), '', '', true]);
    await node.mine(1);
    const error = await node.rpc.call('sendrawtransaction', [first.rawTx]).catch((e: { code: number }) => e);
    expect((error as { code: number }).code).toBe(-25); // Core can no longer tell it is its own
    const to = first.toAddress;
    expect((await wallet.payout({ id: 'w-1', network: 'LTC', currency: 'LTC', toAddress: to, amount: '1.2' })).txHash).toBe(first.txid);
  });

  it('refuses a reused id with another amount, an address of another chain, and more than it holds', async () => {
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    await expect(wallet.payout({ id: 'w-1', network: 'LTC', currency: 'LTC', toAddress: to, amount: '1.3' })).rejects.toBeInstanceOf(PayoutConflictError);
    await expect(
      wallet.payout({ id: 'w-3', network: 'LTC', currency: 'LTC', toAddress: 'ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', amount: '0.1' }),
    ).rejects.toThrow();
    await expect(wallet.payout({ id: 'w-4', network: 'LTC', currency: 'LTC', toAddress: to, amount: '50' })).rejects.toBeInstanceOf(InsufficientFundsError);
    expect(await findPayout(db.sql, 'LTC', 'w-4')).toBeNull();
  });

  it('never spends one output twice when payouts run concurrently', async () => {
    await node.pay(keys.depositAddress(5).address, '0.3');
    await node.pay(keys.depositAddress(6).address, '0.3');
    await node.mine(6);
    await scanner.scan();
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const results = await Promise.all(
      ['c-1', 'c-2', 'c-3'].map((id) => wallet.payout({ id, network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.25' })),
    );
    expect(new Set(results.map((r) => r.txHash)).size).toBe(3);
    const mempool = await node.rpc.call<string[]>('getrawmempool');
    const inputs: string[] = [];
    for (const { txHash } of results) {
      expect(mempool).toContain(txHash);
      const tx = await node.rpc.call<NodeTx>('getrawtransaction', [txHash, true]);
      inputs.push(...tx.vin.map((v) => `${v.txid}:${v.vout}`));
    }
    expect(new Set(inputs).size).toBe(inputs.length);
  });
});
