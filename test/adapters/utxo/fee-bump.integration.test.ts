/**
 * Stuck LTC payouts replaced at a higher fee (BIP-125) by the signer's pass, against a real Litecoin
 * Core regtest node that accepts replacements as Bitcoin Core does (the wallet code is the same for
 * BTC), and a real PostgreSQL. A fresh regtest has no fee estimate, so the market is the fallback
 * rate: a wallet built with a dearer fallback is the market having risen. Litecoin Core's own
 * default refuses replacements: the last test shows what Kassa does then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../../helpers/db.js';
import { filesWithModes } from '../../helpers/owned-files.js';
import { litecoindAvailable, type Litecoind } from './litecoind.js';
import { MNEMONIC, startLtcWallet } from './fixtures.js';
import { AccountKeys } from '../../../server/adapters/chain/utxo/keys.js';
import type { ResolvedParams } from '../../../server/adapters/chain/utxo/params.js';
import { findPayout, payoutAttempts, payoutsToTend, replacedPayouts } from '../../../server/adapters/chain/utxo/store.js';
import { UtxoScanner } from '../../../server/adapters/chain/utxo/scanner.js';
import { UtxoSigner } from '../../../server/adapters/chain/utxo/signer.js';
import { UtxoWallet } from '../../../server/adapters/chain/utxo/wallet.js';
import { RpcClient } from '../../../server/adapters/chain/utxo/rpc.js';
import { toBaseUnits } from '../../../server/adapters/chain/utxo/amounts.js';

const available = litecoindAvailable();
const mnemonicFile = filesWithModes('kassa-signer-');

type NodeTx = { txid: string; vin: { txid: string; vout: number }[]; vout: { n: number; value: string; scriptPubKey: { addresses?: string[]; address?: string } }[] };
const addressOf = (o: NodeTx['vout'][number]) => o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0];

describe.skipIf(!available)('LTC payouts the market outbids', () => {
  let node: Litecoind;
  let db: TestDatabase;
  let params: ResolvedParams;
  let keys: AccountKeys;
  let scanner: UtxoScanner;
  let signer: UtxoSigner;
  let payee: RpcClient;
  /** The wallet as the signer runs it with `KASSA_LTC_FALLBACK_FEE_RATE` = `rate` (sat/vB). */
  const walletAt = (rate: string) => new UtxoWallet({ rpc: node.rpc, sql: db.sql, keys, params, signer, fallbackFeeRate: rate });
  const mempool = () => node.rpc.call<string[]>('getrawmempool');
  const nodeTx = (txid: string) => node.rpc.call<NodeTx>('getrawtransaction', [txid, true]);
  const fund = async (index: number, amount: string) => {
    await node.pay(keys.depositAddress(index).address, amount);
    await node.mine(6);
    await scanner.scan();
  };

  beforeAll(async () => {
    ({ node, db, params, keys, signer, scanner, payee } = await startLtcWallet(mnemonicFile('mnemonic', `${MNEMONIC}\n`, 0o600), { replacement: true }));
  });
  afterAll(async () => {
    await node?.stop();
    await db?.drop();
  });

  it('a payout without change is never replaced: it is sent again, the same bytes', async () => {
    await fund(0, '0.5');
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    // One input, one output at 10 sat/vB: 110 vB, 1,100 sat of fee, nothing left for change.
    const { txHash } = await walletAt('10').payout({ id: 'no-change', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.49998900' });
    expect((await nodeTx(txHash)).vout).toHaveLength(1);
    expect(await walletAt('40').tendPending(0)).toBe(1);
    expect((await findPayout(db.sql, 'LTC', 'no-change'))!.txid).toBe(txHash);
    expect(await payoutAttempts(db.sql, 'LTC', 'no-change')).toHaveLength(1);
    expect(await mempool()).toContain(txHash);
    await node.mine(1);
    await scanner.scan();
    // Mined: the pass leaves it alone.
    expect(await walletAt('40').tendPending(0)).toBe(0);
  });

  it('is replaced only once unmined for its wait and while the market asks more; then from its change, same inputs and payee, and mined', async () => {
    await fund(1, '1');
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash: first } = await walletAt('10').payout({ id: 'stuck', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.3' });
    const before = (await findPayout(db.sql, 'LTC', 'stuck'))!;

    // Not yet waited long enough, or the market asks no more than it pays: sent again as it is.
    expect(await walletAt('40').tendPending(3_600_000)).toBe(1);
    expect(await walletAt('10').tendPending(0)).toBe(1);
    expect((await findPayout(db.sql, 'LTC', 'stuck'))!.txid).toBe(first);
    expect(await replacedPayouts(db.sql, 'LTC', 7)).toEqual([]);

    // Waited, and the market now asks 40 sat/vB.
    expect(await walletAt('40').tendPending(0)).toBe(1);
    const after = (await findPayout(db.sql, 'LTC', 'stuck'))!;
    expect(after.txid).not.toBe(first);
    expect(await mempool()).toContain(after.txid);
    expect(await mempool()).not.toContain(first);
    expect((await payoutAttempts(db.sql, 'LTC', 'stuck')).map((a) => a.txid)).toEqual([first, after.txid]);

    // The first version left the mempool: decoded from its stored bytes.
    const old = await node.rpc.call<NodeTx>('decoderawtransaction', [before.rawTx]);
    const replacement = await nodeTx(after.txid);
    const inputs = (tx: NodeTx) => tx.vin.map((v) => `${v.txid}:${v.vout}`).sort();
    expect(inputs(replacement)).toEqual(inputs(old));
    const paid = (tx: NodeTx) => tx.vout.filter((o) => addressOf(o) === to).map((o) => o.value);
    expect(paid(replacement)).toEqual(['0.30000000']);
    const change = (tx: NodeTx) => toBaseUnits(tx.vout.find((o) => addressOf(o) !== to)!.value);
    // The dearer fee came out of the change, to the sat, and is what the node sees.
    expect(change(old) - change(replacement)).toBe(after.fee - before.fee);
    const entry = await node.rpc.call<{ vsize: number; fees: { base: string } }>('getmempoolentry', [after.txid]);
    expect(toBaseUnits(entry.fees.base)).toBe(after.fee);
    expect((after.fee * 1000n) / BigInt(entry.vsize)).toBeGreaterThanOrEqual(40_000n);
    expect(await replacedPayouts(db.sql, 'LTC', 7)).toEqual([{ id: 'stuck', txHash: after.txid }]);

    // At the market's price now: no second bump, it is sent again as it is.
    expect(await walletAt('40').tendPending(0)).toBe(1);
    expect(await payoutAttempts(db.sql, 'LTC', 'stuck')).toHaveLength(2);

    await node.mine(1);
    expect((await nodeTx(after.txid) as NodeTx & { confirmations?: number }).confirmations).toBe(1);
    expect(await walletAt('40').tendPending(0)).toBe(0);
    expect((await findPayout(db.sql, 'LTC', 'stuck'))!.txid).toBe(after.txid);
    // The payout id again (a retried job): the version in force, already in the chain.
    expect((await walletAt('40').payout({ id: 'stuck', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.3' })).txHash).toBe(after.txid);
  });

  it('a replaced version mined after all (a race with the miners) becomes the payout again', async () => {
    await fund(2, '1');
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash: first } = await walletAt('10').payout({ id: 'raced', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.2' });
    const firstRaw = (await findPayout(db.sql, 'LTC', 'raced'))!.rawTx;
    expect(await walletAt('40').tendPending(0)).toBe(1);
    const replacement = (await findPayout(db.sql, 'LTC', 'raced'))!.txid;
    expect(replacement).not.toBe(first);

    // A miner had the first version: it is in the next block, and the replacement leaves the mempool.
    await node.rpc.call('generateblock', [node.funderAddress, [firstRaw]]);
    expect(await mempool()).not.toContain(replacement);
    expect(await walletAt('40').tendPending(0)).toBe(0);
    expect((await findPayout(db.sql, 'LTC', 'raced'))!.txid).toBe(first);
    expect(await replacedPayouts(db.sql, 'LTC', 7)).toContainEqual({ id: 'raced', txHash: first });
  });

  it('a replacement sent but not recorded (a crash in between) is found in the mempool and becomes the payout', async () => {
    await fund(3, '1');
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash: first } = await walletAt('10').payout({ id: 'crashed', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.1' });
    const original = (await findPayout(db.sql, 'LTC', 'crashed'))!;
    expect(await walletAt('40').tendPending(0)).toBe(1);
    const replacement = (await findPayout(db.sql, 'LTC', 'crashed'))!.txid;
    // As if the process died after the node took the replacement and before the row moved to it.
    await db.sql`update utxo_payouts set txid = ${first}, raw_tx = ${original.rawTx}, fee = ${original.fee.toString()}, fee_rate = 10 where id = 'crashed'`;
    expect(await walletAt('40').tendPending(0)).toBe(0);
    expect((await findPayout(db.sql, 'LTC', 'crashed'))!.txid).toBe(replacement);
    expect(await payoutAttempts(db.sql, 'LTC', 'crashed')).toHaveLength(2);
    expect(await mempool()).toContain(replacement);
  });

  it('a payout older than a week that is not final is still tended; one found final leaves the pass', async () => {
    await fund(7, '0.5');
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash } = await walletAt('10').payout({ id: 'old-unmined', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.1' });
    // Signed eight days ago and, say, evicted from every mempool since: the pass sends it again.
    await db.sql`update utxo_payouts set created_at = now() - interval '8 days' where network = 'LTC' and id = 'old-unmined'`;
    await db.sql`update utxo_payout_attempts set created_at = now() - interval '8 days' where network = 'LTC' and payout_id = 'old-unmined'`;
    expect((await payoutsToTend(db.sql, 'LTC', 7)).map((p) => p.id)).toContain('old-unmined');
    expect(await walletAt('10').tendPending(3_600_000)).toBeGreaterThanOrEqual(1);
    expect(await mempool()).toContain(txHash);
    await node.mine(2);
    await scanner.scan();
    expect(await walletAt('10').settlement('old-unmined', 2)).toMatchObject({ state: 'FINAL', txHash });
    expect((await payoutsToTend(db.sql, 'LTC', 7)).map((p) => p.id)).not.toContain('old-unmined');
    // Its record settled without this signer's settlement (one of an earlier version): the pass finds it mined and old, and lets it go.
    await db.sql`update utxo_payouts set final_at = null where network = 'LTC' and id = 'old-unmined'`;
    await walletAt('10').tendPending(3_600_000);
    expect((await payoutsToTend(db.sql, 'LTC', 7)).map((p) => p.id)).not.toContain('old-unmined');
  });

  it('one pass a network at a time: a pass that finds another one running does nothing', async () => {
    await fund(4, '1'); // (mines the earlier tests' payouts too)
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    await walletAt('10').payout({ id: 'locked', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.1' });
    const other = await db.sql.reserve();
    try {
      await other`select pg_advisory_lock(hashtext(${'kassa-utxo-payouts:LTC'}))`;
      expect(await walletAt('40').tendPending(0)).toBe(0);
      expect(await payoutAttempts(db.sql, 'LTC', 'locked')).toHaveLength(1);
    } finally {
      await other`select pg_advisory_unlock(hashtext(${'kassa-utxo-payouts:LTC'}))`;
      other.release();
    }
    expect(await walletAt('40').tendPending(0)).toBe(1);
    expect(await payoutAttempts(db.sql, 'LTC', 'locked')).toHaveLength(2);
  });

  it('a payout whose change a later payout spends is not replaced (unmined again after a reorganisation): that payout would be evicted', async () => {
    // 5 LTC: the parent's change is then the largest coin, so the next payout spends it (largest first).
    await fund(5, '5'); // (mines the earlier tests' payouts too)
    const to = await payee.call<string>('getnewaddress', ['', 'bech32']);
    const { txHash: parent } = await walletAt('10').payout({ id: 'parent', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.3' });
    const [block] = await node.mine(1);
    await scanner.scan();
    const { txHash: child } = await walletAt('10').payout({ id: 'child', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.1' });
    expect((await nodeTx(child)).vin.map((v) => v.txid)).toEqual([parent]);

    // The block that held the parent is undone: both are unmined, the child spending the parent's change.
    await node.rpc.call('invalidateblock', [block]);
    expect(await mempool()).toEqual(expect.arrayContaining([parent, child]));
    await scanner.scan();

    // The market asks 40 sat/vB. A replacement of the parent would pay more than parent and child
    // together, so the node would take it and evict the child: the parent is sent again as it is.
    await walletAt('40').tendPending(0);
    expect((await findPayout(db.sql, 'LTC', 'parent'))!.txid).toBe(parent);
    expect(await payoutAttempts(db.sql, 'LTC', 'parent')).toHaveLength(1);
    const childNow = (await findPayout(db.sql, 'LTC', 'child'))!.txid;
    expect(await mempool()).toEqual(expect.arrayContaining([parent, childNow]));
    expect((await nodeTx(childNow)).vin.map((v) => v.txid)).toEqual([parent]);

    // Both mined: the payee has both amounts.
    await node.mineFork(1);
    expect(await mempool()).not.toContain(parent);
    expect(await payee.call<string>('getreceivedbyaddress', [to, 1])).toBe(0.4);
  });

  it('on a node that refuses replacements (Litecoin Core by default) the payout stays as it is, in the mempool, and is sent again', async () => {
    const { node: strict, db: strictDb, scanner: strictScanner } = await startLtcWallet(mnemonicFile('mnemonic', `${MNEMONIC}\n`, 0o600));
    try {
      const at = (rate: string) => new UtxoWallet({ rpc: strict.rpc, sql: strictDb.sql, keys, params, signer, fallbackFeeRate: rate });
      await strict.pay(keys.depositAddress(0).address, '1');
      await strict.mine(6);
      await strictScanner.scan();
      const to = await strict.funder.call<string>('getnewaddress', ['', 'bech32']);
      const { txHash } = await at('10').payout({ id: 'refused', network: 'LTC', currency: 'LTC', toAddress: to, amount: '0.3' });
      expect(await at('40').tendPending(0)).toBe(0);
      const [row] = await strictDb.sql<{ txid: string; last_error: string }[]>`select txid, last_error from utxo_payouts where id = 'refused'`;
      expect(row!.txid).toBe(txHash);
      // The refusal stays on the row for the operator (the pass does not clear it by sending the old version again).
      expect(row!.last_error).toMatch(/^replacement [0-9a-f]{64} refused: .*txn-mempool-conflict/);
      expect(await strict.rpc.call<string[]>('getrawmempool')).toEqual([txHash]);
      const attempts = await payoutAttempts(strictDb.sql, 'LTC', 'refused');
      expect(attempts.map((a) => a.txid)[0]).toBe(txHash);
      expect(attempts).toHaveLength(2);
      // The next replacement waits a whole wait from the refused one: meanwhile the payout is sent again, as it is.
      expect(await at('40').tendPending(3_600_000)).toBe(1);
      expect(await payoutAttempts(strictDb.sql, 'LTC', 'refused')).toHaveLength(2);
      expect(await strict.rpc.call<string[]>('getrawmempool')).toEqual([txHash]);
      // Never replaced: nothing for the withdrawal's record to follow.
      expect(await replacedPayouts(strictDb.sql, 'LTC', 7)).toEqual([]);
    } finally {
      await strict.stop();
      await strictDb.drop();
    }
  });
});
