/**
 * The block scanner against a real Litecoin Core regtest node and a real PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { litecoindAvailable, mineConflict, startLitecoind, type Litecoind } from './litecoind.js';
import { accountXpub, recordingSink } from './fixtures.js';
import { AccountKeys } from '../../../server/adapters/chain/utxo/keys.js';
import { resolveParams, type ResolvedParams } from '../../../server/adapters/chain/utxo/params.js';
import { setCursor } from '../../../server/adapters/chain/utxo/store.js';
import { UtxoScanner } from '../../../server/adapters/chain/utxo/scanner.js';
import { toBaseUnits, fromBaseUnits } from '../../../server/adapters/chain/utxo/amounts.js';

const available = litecoindAvailable();

describe.skipIf(!available)('UTXO scanner on a Litecoin regtest node', () => {
  let node: Litecoind;
  let db: TestDatabase;
  let params: ResolvedParams;
  let keys: AccountKeys;
  const recorder = recordingSink();
  const scanner = () =>
    new UtxoScanner({ rpc: node.rpc, sql: db.sql, keys, params, confirmations: 6, sink: recorder.sink, gap: 5 });

  beforeAll(async () => {
    node = await startLitecoind();
    db = await createTestDatabase();
    await node.mine(101);
    const info = await node.rpc.call<{ chain: string }>('getblockchaininfo');
    params = resolveParams('LTC', info.chain);
    keys = new AccountKeys(accountXpub("m/84'/2'/0'"), params);
  });
  afterAll(async () => {
    await node?.stop();
    await db?.drop();
  });

  it('reports a payment SEEN from the mempool and CONFIRMED only at the configured depth', async () => {
    const s = scanner();
    await s.scan();
    const address = keys.depositAddress(0).address;
    expect(address.startsWith('rltc1q')).toBe(true);
    const txid = await node.pay(address, '1.25');
    await s.scan();
    const [seen] = recorder.reports.filter((r) => r.txHash === txid);
    expect(seen).toBeDefined();
    const walletTx = await node.funder.call<{ fee: string }>('gettransaction', [txid]);
    const raw = await node.rpc.call<{ vin: { txid: string; vout: number }[] }>('getrawtransaction', [txid, true]);
    const spent = await node.rpc.call<{ vout: { n: number; scriptPubKey: { addresses: string[] } }[] }>('getrawtransaction', [raw.vin[0]!.txid, true]);
    expect(seen).toMatchObject({
      network: 'LTC',
      toAddress: address,
      currency: 'LTC',
      amount: '1.25',
      state: 'SEEN',
      confirmations: 0,
      fromAddress: spent.vout.find((o) => o.n === raw.vin[0]!.vout)!.scriptPubKey.addresses[0],
      // the wallet reports the fee it paid as a negative amount
      onChainFee: fromBaseUnits(toBaseUnits(walletTx.fee.replace(/^-/, ''))),
    });
    expect(seen!.onChainFee).not.toBe('0');

    for (let depth = 1; depth <= 5; depth++) {
      await node.mine(1);
      await s.scan();
      const last = recorder.of(txid, seen!.outputIndex).at(-1)!;
      expect(last.state).toBe('SEEN');
      expect(last.confirmations).toBe(depth);
    }
    await node.mine(1);
    await s.scan();
    const last = recorder.of(txid, seen!.outputIndex).at(-1)!;
    expect(last).toMatchObject({ state: 'CONFIRMED', confirmations: 6, amount: '1.25' });
    expect(recorder.confirmedCount(txid, seen!.outputIndex)).toBe(1);
    await node.mine(2);
    await s.scan();
    expect(recorder.confirmedCount(txid, seen!.outputIndex)).toBe(1);
  });

  it('counts several transactions in one block and several outputs of one transaction once each, across restarts and rescans', async () => {
    const a1 = keys.depositAddress(1).address;
    const a2 = keys.depositAddress(2).address;
    const a3 = keys.depositAddress(3).address;
    const t1 = await node.pay(a1, '0.5');
    const t2 = await node.funder.call<string>('sendmany', ['', { [a2]: '0.25', [a3]: '0.125' }]);
    const [blockHash] = await node.mine(1);
    const block = await node.rpc.call<{ tx: string[]; height: number }>('getblock', [blockHash, 1]);
    expect(block.tx).toEqual(expect.arrayContaining([t1, t2]));
    await node.mine(5);
    await scanner().scan();

    const credited = recorder.reports.filter((r) => r.state === 'CONFIRMED' && (r.txHash === t1 || r.txHash === t2));
    expect(credited.map((r) => [r.toAddress, r.amount]).sort()).toEqual(
      [[a1, '0.5'], [a2, '0.25'], [a3, '0.125']].sort(),
    );
    const key = (r: { txHash: string; outputIndex: number }) => `${r.txHash}:${r.outputIndex}`;
    expect(new Set(credited.map(key)).size).toBe(3);

    // A restart: a new scanner instance on the same database reports nothing again.
    const before = recorder.reports.length;
    const restarted = scanner();
    const summary = await restarted.scan();
    expect(summary.reports).toBe(0);
    expect(recorder.reports.length).toBe(before);

    // A rescan: move the cursor back below the block and walk it again.
    const height = block.height - 1;
    await setCursor(db.sql, 'LTC', { height, hash: await node.rpc.call<string>('getblockhash', [height]) });
    const rescan = await scanner().scan();
    expect(rescan.blocks).toBeGreaterThanOrEqual(6);
    expect(recorder.reports.length).toBe(before);
    const rows = await db.sql<{ n: number }[]>`select count(*)::int as n from utxo_outputs where txid in (${t1}, ${t2})`;
    expect(rows[0]!.n).toBe(3);
    for (const r of credited) expect(recorder.confirmedCount(r.txHash, r.outputIndex)).toBe(1);
  });

  it('never credits a deposit double-spent away after invalidateblock, and reports it DROPPED', async () => {
    const s = scanner();
    const address = keys.depositAddress(4).address;
    const txid = await node.pay(address, '2');
    const [minedIn] = await node.mine(1);
    await s.scan();
    const out = recorder.reports.find((r) => r.txHash === txid)!;
    expect(out).toMatchObject({ state: 'SEEN', confirmations: 1 });

    // Take the block away; the deposit returns to the mempool.
    await node.rpc.call('invalidateblock', [minedIn]);
    expect(await node.rpc.call<string[]>('getrawmempool')).toContain(txid);
    // A conflicting transaction spending the same inputs back to the funder, mined on the fork.
    expect(await mineConflict(node, txid)).toBe(true);
    await node.mine(7);
    expect(await node.rpc.call<string[]>('getrawmempool')).not.toContain(txid);
    // Core still returns the transaction, with the stale block: the scanner must not trust that.
    const stale = await node.rpc.call<{ blockhash?: string }>('getrawtransaction', [txid, true]);
    expect(stale.blockhash).toBe(minedIn);

    const summary = await s.scan();
    expect(summary.reorgs).toBe(1);
    const reports = recorder.of(txid, out.outputIndex);
    expect(reports.at(-1)).toMatchObject({ state: 'DROPPED', amount: '2' });
    expect(reports.some((r) => r.state === 'CONFIRMED')).toBe(false);
    await node.mine(3);
    await s.scan();
    expect(recorder.of(txid, out.outputIndex).some((r) => r.state === 'CONFIRMED')).toBe(false);
    expect(recorder.of(txid, out.outputIndex).filter((r) => r.state === 'DROPPED')).toHaveLength(1);
  });

  it('counts confirmations from the tip the node has when its chain gets shorter during a pass, never the tip it had', async () => {
    // A node whose best chain loses its top block right after it answered getblockcount (a reorganisation
    // to a shorter chain with more work, or an operator's invalidateblock): the pass must not credit from the old tip.
    let shortenAfterCount = false;
    const rpc = new Proxy(node.rpc, {
      get(target, prop, receiver) {
        if (prop !== 'call') return Reflect.get(target, prop, receiver);
        return async (method: string, params?: unknown[]) => {
          const result = await target.call(method, params);
          if (method === 'getblockcount' && shortenAfterCount) {
            shortenAfterCount = false;
            await target.call('invalidateblock', [await target.call<string>('getblockhash', [result])]);
          }
          return result;
        };
      },
    });
    const s = new UtxoScanner({ rpc, sql: db.sql, keys, params, confirmations: 6, sink: recorder.sink, gap: 5 });
    await s.scan();
    const address = keys.depositAddress(1).address;
    const txid = await node.pay(address, '0.5');
    await node.mine(5);
    await s.scan();
    const outputIndex = recorder.reports.find((r) => r.txHash === txid)!.outputIndex;
    const last = () => recorder.of(txid, outputIndex).at(-1);
    expect(last()).toMatchObject({ state: 'SEEN', confirmations: 5 });
    const [sixth] = await node.mine(1);
    shortenAfterCount = true;
    await s.scan();
    expect(shortenAfterCount).toBe(false);
    // The block that made it 6 is gone: still 5 deep, not credited.
    expect(await node.rpc.call<number>('getbestblockhash')).not.toBe(sixth);
    expect(last()).toMatchObject({ state: 'SEEN', confirmations: 5 });
    expect(recorder.confirmedCount(txid, outputIndex)).toBe(0);
    await node.rpc.call('reconsiderblock', [sixth]);
    await s.scan();
    expect(last()).toMatchObject({ state: 'CONFIRMED', confirmations: 6 });
  });

  it('serialises concurrent passes (several workers): each deposit reported once', async () => {
    const txid = await node.pay(keys.depositAddress(4 + 1).address, '0.01');
    await node.mine(6);
    const passes = await Promise.all([scanner().scan(), scanner().scan(), scanner().scan()]);
    expect(passes.filter((p) => p.reports > 0)).toHaveLength(1);
    expect(recorder.reports.filter((r) => r.txHash === txid).map((r) => r.state)).toEqual(['CONFIRMED']);
  });

  it('watches the gap after an address used earlier in the same pass', async () => {
    // derived now: 0..10 (used up to 5). Index 9 is watched; 13 only after 9 is seen used.
    const first = await node.pay(keys.depositAddress(9).address, '0.02');
    await node.mine(1);
    const second = await node.pay(keys.depositAddress(13).address, '0.03');
    await node.mine(6);
    await scanner().scan(); // one pass over both blocks
    expect(recorder.reports.filter((r) => r.txHash === first || r.txHash === second).map((r) => [r.amount, r.state])).toEqual([
      ['0.02', 'CONFIRMED'],
      ['0.03', 'CONFIRMED'],
    ]);
  });

  it('keeps the derived-but-unused gap bounded', async () => {
    const rows = await db.sql<{ branch: number; n: number; used: number }[]>`
      select branch, count(*)::int as n, coalesce(max(idx) filter (where used), -1)::int as used
      from utxo_addresses where network = 'LTC' group by branch order by branch`;
    // the highest deposit address paid is 13, so 14..18 are the gap of 5
    expect(rows).toEqual([
      { branch: 0, n: 19, used: 13 },
      { branch: 1, n: 5, used: -1 },
    ]);
  });
});
