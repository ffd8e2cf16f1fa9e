/**
 * The engine facade on a real Litecoin regtest: chain learned from the node, reorgs without a
 * double-spend, a credit reorganised away (and one double-spent away, then mined after all), health for /ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { litecoindAvailable, mineConflict, startLitecoind, type Litecoind } from './litecoind.js';
import { accountXpub, recordingSink } from './fixtures.js';
import { createUtxoEngine, type UtxoEngine } from '../../../server/adapters/chain/utxo/index.js';

const available = litecoindAvailable();

describe.skipIf(!available)('UTXO engine on a Litecoin regtest node', () => {
  let node: Litecoind;
  let db: TestDatabase;
  let engine: UtxoEngine;
  const recorder = recordingSink();

  beforeAll(async () => {
    node = await startLitecoind();
    db = await createTestDatabase();
    await node.mine(101);
    engine = await createUtxoEngine({
      network: 'LTC',
      rpcUrl: node.url,
      xpub: accountXpub("m/84'/2'/0'"),
      confirmations: 2,
      sql: db.sql,
      sink: recorder.sink,
      gap: 3,
    });
    await engine.scan();
  });
  afterAll(async () => {
    await node?.stop();
    await db?.drop();
  });

  it('follows the node’s chain for prefixes and address validation', () => {
    expect(engine.params.chain).toBe('regtest');
    expect(engine.depositAddress(0)).toMatch(/^rltc1q/);
    expect(engine.treasuryAddress()).toMatch(/^rltc1q/);
    expect(engine.isValidAddress(node.funderAddress)).toBe(true);
    expect(engine.isValidAddress('ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh')).toBe(false);
    expect(engine.isValidAddress('not an address')).toBe(false);
  });

  it('watches an address handed out beyond the gap', async () => {
    const address = await engine.watchDeposit(12);
    const txid = await node.pay(address, '0.3');
    await engine.scan();
    expect(recorder.of(txid, recorder.reports.find((r) => r.txHash === txid)!.outputIndex).at(-1)).toMatchObject({ state: 'SEEN', toAddress: address });
    await node.mine(2);
    await engine.scan();
    expect(recorder.reports.filter((r) => r.txHash === txid).map((r) => [r.state, r.confirmations])).toEqual([
      ['SEEN', 0],
      ['CONFIRMED', 2],
    ]);
  });

  it('takes a reorganised-away deposit back to unconfirmed and credits it once where it is mined again', async () => {
    const txid = await node.pay(engine.depositAddress(1), '0.4');
    const [first] = await node.mine(1);
    await engine.scan();
    await node.rpc.call('invalidateblock', [first]);
    await engine.scan();
    // back in the mempool: unconfirmed again, not dropped
    expect(recorder.reports.filter((r) => r.txHash === txid).map((r) => [r.state, r.confirmations])).toEqual([
      ['SEEN', 1],
      ['SEEN', 0],
    ]);
    await node.mineFork(2); // a new chain that mines it again
    await engine.scan();
    const states = recorder.reports.filter((r) => r.txHash === txid).map((r) => [r.state, r.confirmations]);
    expect(states).toEqual([
      ['SEEN', 1],
      ['SEEN', 0],
      ['CONFIRMED', 2],
    ]);
    const health = await engine.health();
    expect(health.reorgs).toBe(1);
    // Another process (the web role, which never scans) reads the same from the database for /metrics.
    const web = await createUtxoEngine({ network: 'LTC', rpcUrl: node.url, xpub: accountXpub("m/84'/2'/0'"), confirmations: 2, sql: db.sql, sink: recordingSink().sink });
    const seen = await web.health();
    expect(seen.reorgs).toBe(1);
    expect(seen.lastScanAt?.getTime()).toBe(health.lastScanAt?.getTime());
    expect(Date.now() - seen.lastScanAt!.getTime()).toBeLessThan(60_000);
  });

  it('flags a credited deposit whose blocks leave the best chain, without reporting it twice', async () => {
    const txid = await node.pay(engine.depositAddress(2), '0.5');
    const [first] = await node.mine(2);
    await engine.scan();
    expect(recorder.confirmedCount(txid, recorder.reports.find((r) => r.txHash === txid)!.outputIndex)).toBe(1);
    await node.rpc.call('invalidateblock', [first]);
    const before = recorder.reports.length;
    await engine.scan();
    expect(recorder.reports.length).toBe(before);
    const flagged = await engine.creditedThenReorged();
    expect(flagged.map((f) => [f.txid, f.amount])).toEqual([[txid, 50_000_000n]]);
    // and counted in the health behind /metrics' kassa_chain_credited_off_chain while it is in no block
    expect((await engine.health()).creditedOffChain).toBe(1);
  });

  it('reports a credited deposit double-spent away DROPPED, once, after it stayed gone for the depth (Kassa then reverses its credit)', async () => {
    const address = await engine.watchDeposit(13);
    const txid = await node.pay(address, '0.6');
    const [first] = await node.mine(2);
    await engine.scan();
    const vout = recorder.reports.find((r) => r.txHash === txid)!.outputIndex;
    const states = () => recorder.of(txid, vout).map((r) => r.state);
    expect(states().at(-1)).toBe('CONFIRMED');
    const credited = states().length;
    await node.rpc.call('invalidateblock', [first]);
    // the same inputs spent elsewhere, mined: the deposit is in no block and not in the mempool
    expect(await mineConflict(node, txid)).toBe(true);
    await engine.scan();
    expect(states()).toHaveLength(credited); // gone for 0 blocks: still credited, flagged
    expect((await engine.creditedThenReorged()).map((f) => f.txid)).toContain(txid);
    await node.mineFork(1);
    await engine.scan();
    expect(states()).toHaveLength(credited); // gone for 1 block of 2
    await node.mineFork(1);
    await engine.scan();
    expect(states().slice(credited)).toEqual(['DROPPED']);
    expect(recorder.of(txid, vout).at(-1)).toMatchObject({ state: 'DROPPED', confirmations: 0, toAddress: address });
    await node.mineFork(1);
    await engine.scan();
    expect(states().slice(credited)).toEqual(['DROPPED']); // reported once

    // The conflict's block is reorganised away in turn and the deposit mined after all: SEEN anew,
    // then CONFIRMED (Kassa then credits it again: deposit-flows, "mined again after its credit was reversed").
    const forkHeight = (await node.rpc.call<{ height: number }>('getblockheader', [first])).height;
    await node.rpc.call('invalidateblock', [await node.rpc.call<string>('getblockhash', [forkHeight])]);
    await node.rpc.call('generateblock', [node.funderAddress, [await node.rpc.call<string>('getrawtransaction', [txid])]]);
    await engine.scan();
    expect(states().slice(credited)).toEqual(['DROPPED', 'SEEN']);
    await node.mineFork(1);
    await engine.scan();
    expect(states().slice(credited)).toEqual(['DROPPED', 'SEEN', 'CONFIRMED']);
    expect((await engine.creditedThenReorged()).map((f) => f.txid)).not.toContain(txid);
  });

  it('reports health for /ready: lag 0 when caught up, not ok when the node is down', async () => {
    await node.mineFork(1);
    await engine.scan();
    const health = await engine.health();
    expect(health).toMatchObject({ ok: true, lag: 0 });
    expect(health.height).toBe(health.tip);
    await node.stop();
    const down = await engine.health();
    expect(down.ok).toBe(false);
    expect(down.error).toMatch(/unavailable/);
  });
});
