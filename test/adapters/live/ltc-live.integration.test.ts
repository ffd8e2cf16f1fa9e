/**
 * Live mode on a real Litecoin regtest node (issue 16, CONTRACT §10):
 * Kassa with KASSA_LTC_RPC_URL pointing at litecoind, watch-only bech32
 * addresses of the node's chain (rltc1…), deposits credited at depth, two
 * outputs in one block both counted and still once each after a restart and
 * a rescan, an underpayment that stays short, a double-spend after
 * invalidateblock never credited, a withdrawal signed by Kassa itself from
 * the outputs it tracks, one the market outbids replaced by the signer (the
 * node accepts replacements, as Bitcoin Core does), and /ready failing when
 * the node stops.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildLiveDeps } from '../../../server/compose.js';
import { chooseCurrency } from '../../../server/modules/payments/index.js';
import { postEntries } from '../../../server/modules/ledger/index.js';
import { verifyCallback } from '../../../server/modules/callbacks/index.js';
import { Dec } from '../../../server/modules/money/index.js';
import { parseMasterKey } from '../../../server/platform/secrets.js';
import { AccountKeys, resolveParams } from '../../../server/adapters/chain/utxo/index.js';
import { TEST_MASTER_KEY } from '../../helpers/app.js';
import { eventually } from '../../helpers/worker.js';
import { testXpub } from '../../helpers/watch-only.js';
import { headersOf } from '../../modules/callbacks/receiver.js';
import { litecoindAvailable, mineConflict, startLitecoind, type Litecoind } from '../utxo/litecoind.js';
import { startLiveApp, type LiveApp } from './live-app.js';

const CONFIRMATIONS = 3;
const available = litecoindAvailable();

describe.skipIf(!available)('live mode on a Litecoin regtest node', () => {
  let node: Litecoind;
  let app: LiveApp;

  async function payment(id: string) {
    const read = await app.signed('GET', `/v1/payments/${id}`);
    expect(read.statusCode, read.body).toBe(200);
    return read.json();
  }

  /** A payment in LTC: EUR-priced with the currency chosen, or REUSABLE in LTC. */
  async function ltcPayment(clientPaymentId: string, eur: string) {
    const created = await app.signed('POST', '/v1/payments', {
      clientPaymentId, businessId: app.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: eur,
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().paymentInfo.paymentId as string;
    const row = await chooseCurrency(app.deps, id, { depositCurrency: 'LTC', network: 'LTC' });
    return { id, address: row.walletAddress!, amount: new Dec(row.expectedDepositAmount!).toFixed() };
  }

  async function mineAndScan(blocks: number) {
    for (let i = 0; i < blocks; i++) {
      await node.mine(1);
      await app.scan('LTC');
    }
  }

  /** A withdrawal of `amount` LTC to a fresh address of the funder's, from a balance credited for it. */
  async function withdraw(clientWithdrawalId: string, amount: string) {
    await postEntries(app.db.db, [{ businessId: app.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000', kind: 'TEST' }], app.clock.now());
    const payee = await node.funder.call<string>('getnewaddress', ['', 'bech32']);
    const created = await app.signed('POST', '/v1/withdrawals', {
      clientWithdrawalId, businessId: app.business.businessId, withdrawCurrency: 'LTC', network: 'LTC', address: payee, amount,
    });
    expect(created.statusCode, created.body).toBe(200);
    return { payee, withdrawalId: created.json().withdrawalId as string };
  }

  /** What transaction `txid` pays `address`, each output as an exact decimal. */
  async function paidTo(txid: string, address: string): Promise<string[]> {
    const tx = await node.rpc.call<{ vout: { value: string; scriptPubKey: { addresses?: string[]; address?: string } }[] }>('getrawtransaction', [txid, true]);
    return tx.vout.filter((o) => (o.scriptPubKey.addresses ?? [o.scriptPubKey.address]).includes(address)).map((o) => new Dec(o.value).toFixed());
  }

  beforeAll(async () => {
    node = await startLitecoind({ replacement: true });
    await node.mine(101); // a spendable coinbase for the funder
    app = await startLiveApp({
      KASSA_LTC_RPC_URL: node.url,
      KASSA_LTC_XPUB: testXpub('LTC'),
      KASSA_LTC_CONFIRMATIONS: String(CONFIRMATIONS),
      KASSA_LTC_FALLBACK_FEE_RATE: '2',
    });
    await app.scan('LTC');
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await node?.stop();
  });

  test('addresses are <xpub>/0/i of the node’s chain, numbered densely for LTC alone; only LTC is offered', async () => {
    const p = await ltcPayment('ltc-addr', '8.00');
    expect(p.address).toMatch(/^rltc1q/);
    const keys = new AccountKeys(testXpub('LTC'), resolveParams('LTC', 'regtest'));
    // The first LTC payment is /0/1 of the LTC xpub: its own numbering, whatever other networks handed out.
    const [row] = await app.db.sql`select address_index::int as i from payments where id = ${p.id}`;
    expect(row!.i).toBe(1);
    expect(p.address).toBe(keys.depositAddress(1).address);
    const currencies = (await app.signed('GET', '/v1/currencies')).json().currencies as { code: string; networks: { network: string }[] }[];
    expect(currencies.flatMap((c) => c.networks.map((n) => `${c.code}/${n.network}`))).toEqual(['LTC/LTC']);
    const valid = await app.signed('GET', `/api/v1/currency/LTC/network/LTC/address/${node.funderAddress}/valid`);
    expect(valid.json()).toEqual({ valid: true });
    const mainnet = await app.signed('GET', '/api/v1/currency/LTC/network/LTC/address/ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh/valid');
    expect(mainnet.json().valid).toBe(false);
  });

  test('an EUR payment in LTC paid by sendtoaddress is AWAITING before and DEPOSITED after the configured depth', async () => {
    const p = await ltcPayment('ltc-1', '8.00'); // 8 EUR at 80 EUR/LTC
    expect(p.amount).toBe('0.1');
    const txid = await node.pay(p.address, '0.1');
    await app.scan('LTC');
    const seen = await payment(p.id);
    expect(seen.status).toBe('AWAITING');
    expect(seen.deposits[0]).toMatchObject({ transactionId: txid, status: 'UNCONFIRMED', depositAmount: '0.1' });
    // fromAddress from the spent output (-txindex), onChainFee = inputs − outputs
    expect(seen.deposits[0].fromAddress).toMatch(/^rltc1/);
    expect(new Dec(seen.deposits[0].onChainFee).gt(0)).toBe(true);
    await mineAndScan(CONFIRMATIONS - 1);
    expect((await payment(p.id)).status).toBe('AWAITING');
    await mineAndScan(1);
    const credited = await payment(p.id);
    expect(credited.status).toBe('DEPOSITED');
    expect(credited.deposits[0].status).toBe('CONFIRMED');
  });

  test('two deposits in one block to a REUSABLE payment both count, and once each after a restart and a rescan', async () => {
    const created = await app.signed('POST', '/v1/payments', {
      clientPaymentId: 'ltc-reusable', businessId: app.business.businessId, locale: 'en', type: 'REUSABLE', depositCurrency: 'LTC', depositAmount: '0.05', network: 'LTC',
    });
    expect(created.statusCode, created.body).toBe(200);
    const { paymentId, walletAddress } = created.json().paymentInfo as { paymentId: string; walletAddress: string };
    const a = await node.pay(walletAddress, '0.05');
    const b = await node.pay(walletAddress, '0.07');
    await mineAndScan(CONFIRMATIONS);
    const read = await payment(paymentId);
    expect(read.deposits.map((d: { transactionId: string }) => d.transactionId).sort()).toEqual([a, b].sort());
    expect(read.actualDepositAmount).toBe('0.12');

    // A restart (new deps over the same database) that rescans the last blocks finds nothing new.
    await app.db.sql`update utxo_cursor set height = height - ${CONFIRMATIONS + 2} where network = 'LTC'`;
    await app.db.sql`delete from utxo_blocks where network = 'LTC' and height > (select height from utxo_cursor where network = 'LTC')`;
    const restarted = await buildLiveDeps(app.deps.config, app.db, parseMasterKey(TEST_MASTER_KEY), 'worker', {
      now: app.clock.now,
      env: app.env,
      startAttempts: 1,
    });
    await restarted.background.find((t) => t.name === 'LTC scanner')!.runOnce();
    await mineAndScan(1);
    const again = await payment(paymentId);
    expect(again.deposits).toHaveLength(2);
    expect(again.actualDepositAmount).toBe('0.12');
    const [n] = await app.db.sql`select count(*)::int as n from deposits where payment_id = ${paymentId}`;
    expect(n!.n).toBe(2);
  });

  test('an underpayment stays short', async () => {
    const p = await ltcPayment('ltc-short', '8.00');
    await node.pay(p.address, '0.04');
    await mineAndScan(CONFIRMATIONS);
    const read = await payment(p.id);
    expect(read.deposits[0].status).toBe('CONFIRMED');
    expect(read.status).not.toBe('DEPOSITED');
    expect(read.actualDepositAmount).toBe('0.04');
  });

  test('a deposit double-spent away after invalidateblock is never credited', async () => {
    const p = await ltcPayment('ltc-double', '8.00');
    const txid = await node.pay(p.address, '0.1');
    const [minedIn] = await node.mine(1);
    await app.scan('LTC');
    expect((await payment(p.id)).status).toBe('AWAITING');
    await node.rpc.call('invalidateblock', [minedIn]);
    // A conflicting transaction spends the same inputs back to the funder, mined on the new chain.
    expect(await mineConflict(node, txid)).toBe(true);
    await mineAndScan(CONFIRMATIONS + 2);
    const read = await payment(p.id);
    expect(read.status).not.toBe('DEPOSITED');
    expect(read.deposits.map((d: { status: string }) => d.status)).toEqual(['FAILED']);
    const [credit] = await app.db.sql`select count(*)::int as n from deposits where payment_id = ${p.id} and credited`;
    expect(credit!.n).toBe(0);
  });

  /** The txid a withdrawal was sent with, once its job has sent it. */
  async function sentTxid(id: string): Promise<string> {
    return eventually(async () => ((await app.signed('GET', `/v1/withdrawals/${id}`)).json().transactionId as string | null) ?? null, 30_000, 'the withdrawal sent');
  }

  /** The signer's pass after each of `n` blocks mined. */
  async function mineAndSettle(n: number) {
    for (let i = 0; i < n; i++) {
      await node.mine(1);
      await app.payouts();
    }
  }

  test('a withdrawal arrives at the payee with the recorded txid; COMPLETED, with the signed callback, once CONFIRMATIONS deep', async () => {
    const { payee, withdrawalId } = await withdraw('ltc-w-1', '0.05');
    const txid = await sentTxid(withdrawalId);
    // The node has it (in its mempool), paying the payee what was asked; PROCESSING until its block is deep enough.
    expect(await paidTo(txid, payee)).toEqual(['0.05']);
    await mineAndSettle(CONFIRMATIONS - 1);
    expect((await app.signed('GET', `/v1/withdrawals/${withdrawalId}`)).json()).toMatchObject({ status: 'PROCESSING', transactionId: txid, completedAt: null });
    expect(app.receiver.hitsFor('/withdrawals')).toEqual([]);
    await mineAndSettle(1);
    const hit = await eventually(async () => app.receiver.hitsFor('/withdrawals')[0], 30_000, 'the withdrawal callback');
    const body = JSON.parse(hit.body);
    expect(body).toMatchObject({ status: 'COMPLETED', transactionId: txid, actualWithdrawAmount: '0.05' });
    expect(verifyCallback(app.business.callbackSecret, headersOf(hit), hit.body, { now: app.clock.now() })).toMatchObject({ transactionId: txid });
    const read = (await app.signed('GET', `/v1/withdrawals/${withdrawalId}`)).json();
    expect(read).toMatchObject({ status: 'COMPLETED', transactionId: txid });
    const tx = await node.rpc.call<{ confirmations: number; blocktime: number }>('getrawtransaction', [txid, true]);
    expect(tx.confirmations).toBe(CONFIRMATIONS);
    expect(read.completedAt).toBe(tx.blocktime);
  });

  test('a withdrawal the market outbids is replaced by the signer, and then shows the hash on chain (with an event keeping the old one)', async () => {
    const { payee, withdrawalId: id } = await withdraw('ltc-w-bump', '0.04');
    const first = await sentTxid(id);
    // Unmined, and the market rose: the signer (here with the operator's new fee rate) replaces it at once.
    const signer = await buildLiveDeps(app.deps.config, app.db, parseMasterKey(TEST_MASTER_KEY), 'signer', {
      now: app.clock.now,
      env: { ...app.env, KASSA_LTC_FALLBACK_FEE_RATE: '8', KASSA_LTC_FEE_BUMP_AFTER_S: '0' },
      startAttempts: 1,
    });
    const signerPass = () => signer.background.find((t) => t.name === 'payouts')!.runOnce();
    await signerPass();
    const replaced = (await app.signed('GET', `/v1/withdrawals/${id}`)).json();
    expect(replaced).toMatchObject({ status: 'PROCESSING' });
    expect(replaced.transactionId).not.toBe(first);
    const mempool = await node.rpc.call<string[]>('getrawmempool');
    expect(mempool).toContain(replaced.transactionId);
    expect(mempool).not.toContain(first);
    for (let i = 0; i < CONFIRMATIONS; i++) {
      await node.mine(1);
      await signerPass();
    }
    const read = (await app.signed('GET', `/v1/withdrawals/${id}`)).json();
    expect(read).toMatchObject({ status: 'COMPLETED', transactionId: replaced.transactionId });
    expect(await paidTo(read.transactionId, payee)).toEqual([new Dec(read.actualWithdrawAmount).toFixed()]);
    const [event] = await app.db.sql<{ from_status: string; data: { previousTransactionId: string; transactionId: string } }[]>`
      select from_status, data from events where entity_type = 'withdrawal' and entity_id = ${id} and data ? 'previousTransactionId'`;
    expect(event).toMatchObject({ from_status: 'PROCESSING', data: { previousTransactionId: first, transactionId: read.transactionId } });
  });

  test('/ready shows the network, and fails when the node stops', async () => {
    await app.scan('LTC');
    const ready = await app.app.inject({ url: '/ready' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().networks.LTC).toMatchObject({ ok: true, lag: 0 });
    expect((await app.app.inject({ url: '/metrics' })).body).toMatch(/kassa_chain_tip\{network="LTC"\} \d+/);
    await node.stop();
    const down = await app.app.inject({ url: '/ready' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'not_ready', networks: { LTC: { ok: false } } });
    const metrics = (await app.app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/kassa_chain_up\{network="LTC"\} 0/);
    // The node's tip and the lag are unknown now: no sample, not the last ones seen.
    expect(metrics).not.toMatch(/kassa_chain_(tip|lag_blocks)\{network="LTC"\}/);
    expect(metrics).toMatch(/kassa_chain_height\{network="LTC"\} \d+/);
  });
});
