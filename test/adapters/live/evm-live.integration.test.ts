/**
 * Live mode on a real EVM node (issue 15, CONTRACT §10): Kassa with
 * KASSA_ETH_RPC_URL pointing at anvil, addresses from an xpub, deposits
 * found by the scanner, credited at the configured depth, a reorged-away
 * deposit never credited, swept to the treasury, a withdrawal paid by the
 * signer with its real hash in the record and the signed callback, and a
 * node outage that delays but loses nothing.
 */
import { createWalletClient, encodeAbiParameters, getAddress, http, keccak256, parseEther, parseUnits, type Hex, type WalletClient } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addressBook } from '../../../server/adapters/chain/evm/index.js';
import { checkoutView, chooseCurrency } from '../../../server/modules/payments/index.js';
import { postEntries } from '../../../server/modules/ledger/index.js';
import { Dec } from '../../../server/modules/money/index.js';
import { verifyCallback } from '../../../server/modules/callbacks/index.js';
import { eventually } from '../../helpers/worker.js';
import { testXpub } from '../../helpers/watch-only.js';
import { ANVIL_MNEMONIC, startAnvil, type Anvil } from '../evm/anvil.js';
import { deployTestToken } from '../evm/erc20.js';
import { headersOf } from '../../modules/callbacks/receiver.js';
import { startLiveApp, type LiveApp } from './live-app.js';

const CONFIRMATIONS = 3;
const XPUB = testXpub('ETH');
const book = addressBook(XPUB);
const ERC20 = [
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'o', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'v', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }] },
  { type: 'function', name: 'mint', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'v', type: 'uint256' }], outputs: [] },
] as const;

/** Where the test token keeps `balanceOf[owner]` (the mapping is its fourth slot: name, symbol, totalSupply before it). */
const balanceSlot = (owner: Hex) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [owner, 3n]));

let anvil: Anvil;
let app: LiveApp;
let funder: WalletClient;
let usdt: Hex;

async function payment(id: string) {
  const read = await app.signed('GET', `/v1/payments/${id}`);
  expect(read.statusCode, read.body).toBe(200);
  return read.json();
}

/** An EUR payment whose buyer picked `currency` on ETH: its id, address and amount due. */
async function eurPayment(clientPaymentId: string, displayAmount: string, currency: 'ETH' | 'USDT') {
  const created = await app.signed('POST', '/v1/payments', {
    clientPaymentId, businessId: app.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount,
  });
  expect(created.statusCode, created.body).toBe(200);
  const id = created.json().paymentInfo.paymentId as string;
  const row = await chooseCurrency(app.deps, id, { depositCurrency: currency, network: 'ETH' });
  return { id, address: row.walletAddress as Hex, amount: row.expectedDepositAmount! };
}

async function sendEth(to: Hex, amount: string): Promise<Hex> {
  const hash = await funder.sendTransaction({ account: funder.account!, chain: null, to, value: parseEther(amount) });
  await anvil.mined(hash);
  return hash;
}

async function sendUsdt(to: Hex, amount: string): Promise<Hex> {
  const hash = await funder.writeContract({ account: funder.account!, chain: null, address: usdt, abi: ERC20, functionName: 'transfer', args: [to, parseUnits(amount, 6)] });
  await anvil.mined(hash);
  return hash;
}

/** Mine one block at a time, scanning after each, `n` times. */
async function mineAndScan(n: number) {
  for (let i = 0; i < n; i++) {
    await anvil.mine(1);
    await app.scan('ETH');
  }
}

beforeAll(async () => {
  anvil = await startAnvil();
  funder = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  usdt = (await deployTestToken(funder, anvil.client, 6)).address;
  await anvil.mined(await funder.writeContract({ account: funder.account!, chain: null, address: usdt, abi: ERC20, functionName: 'mint', args: [funder.account!.address, parseUnits('100000', 6)] }));
  app = await startLiveApp({
    KASSA_ETH_RPC_URL: anvil.url,
    KASSA_ETH_XPUB: XPUB,
    KASSA_ETH_CONFIRMATIONS: String(CONFIRMATIONS),
    KASSA_ETH_TOKENS: `USDT=${usdt}`,
    // A payout the market has outbid is replaced at once (the signer's loop runs by hand here).
    KASSA_ETH_FEE_BUMP_AFTER_S: '0',
  });
  await app.scan('ETH'); // the cursor starts at the current tip
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await anvil?.stop();
});

describe('live mode offers only the configured network', () => {
  test('currencies list ETH and USDT on ETH only; another network or token is 422 NETWORK_NOT_ENABLED; no test-helper routes', async () => {
    const currencies = (await app.signed('GET', '/v1/currencies')).json().currencies as { code: string; networks: { network: string }[] }[];
    const pairs = currencies.filter((c) => c.networks.length).flatMap((c) => c.networks.map((n) => `${c.code}/${n.network}`));
    expect(pairs.sort()).toEqual(['ETH/ETH', 'USDT/ETH']);
    const bsc = await app.signed('POST', '/v1/payments', {
      clientPaymentId: 'bsc-1', businessId: app.business.businessId, locale: 'en', depositCurrency: 'USDT', depositAmount: '10', network: 'BSC',
    });
    expect(bsc.statusCode, bsc.body).toBe(422);
    expect(bsc.json().code).toBe('NETWORK_NOT_ENABLED');
    const usdc = await app.signed('POST', '/v1/payments', {
      clientPaymentId: 'usdc-1', businessId: app.business.businessId, locale: 'en', depositCurrency: 'USDC', depositAmount: '10', network: 'ETH',
    });
    expect(usdc.statusCode, usdc.body).toBe(422);
    expect(usdc.json().code).toBe('NETWORK_NOT_ENABLED');
    const helper = await app.signed('POST', '/v1/test/deposits', {});
    expect(helper.statusCode).toBe(404);
  });

  test("the checkout's EIP-681 QR code names this node's chain and the configured token contract, not mainnet's", async () => {
    const chainId = await anvil.client.getChainId();
    expect(chainId).not.toBe(1);
    const uriOf = async (clientPaymentId: string, currency: 'ETH' | 'USDT') => {
      const created = await app.signed('POST', '/v1/payments', {
        clientPaymentId, businessId: app.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '25.00',
      });
      expect(created.statusCode, created.body).toBe(200);
      const row = await chooseCurrency(app.deps, created.json().paymentInfo.paymentId, { depositCurrency: currency, network: 'ETH' });
      return { row, uri: (await checkoutView(app.deps, row)).paymentUri };
    };
    const eth = await uriOf('uri-eth', 'ETH');
    expect(eth.uri).toBe(`ethereum:${eth.row.walletAddress}@${chainId}?value=${parseEther(eth.row.expectedDepositAmount!)}`);
    const token = await uriOf('uri-usdt', 'USDT');
    // The amount in the contract's own base units (its decimals() is 6).
    expect(token.uri).toBe(`ethereum:${getAddress(usdt)}@${chainId}/transfer?address=${token.row.walletAddress}&uint256=${parseUnits(token.row.expectedDepositAmount!, 6)}`);
  });

  test('deposit addresses are <xpub>/0/i, EIP-55, and never reused across payments', async () => {
    const a = await eurPayment('addr-a', '5.00', 'ETH');
    const b = await eurPayment('addr-b', '5.00', 'ETH');
    expect(a.address).not.toBe(b.address);
    const [rows] = await app.db.sql`select array_agg(address_index order by address_index) as idx from payments where id in (${a.id}, ${b.id})`;
    const [ia, ib] = rows!.idx as string[];
    expect(a.address).toBe(book.depositAddress(Number(ia)));
    expect(b.address).toBe(book.depositAddress(Number(ib)));
  });
});

describe('deposits on a real node', () => {
  test('an EUR payment in ETH is AWAITING when first seen and DEPOSITED only at the configured depth; then swept to the treasury', async () => {
    const p = await eurPayment('eth-1', '25.00', 'ETH');
    expect(new Dec(p.amount).toFixed()).toBe('0.01');
    const hash = await sendEth(p.address, '0.01');
    await app.scan('ETH');
    const seen = await payment(p.id);
    expect(seen.status).toBe('AWAITING');
    expect(seen.deposits).toHaveLength(1);
    expect(seen.deposits[0]).toMatchObject({ transactionId: hash, status: 'UNCONFIRMED', depositAmount: '0.01' });
    expect(seen.deposits[0].fromAddress.toLowerCase()).toBe(funder.account!.address.toLowerCase());
    // what the sender paid the network: the transfer's gas, from its receipt (not the catalog's typical fee)
    const receipt = await anvil.client.getTransactionReceipt({ hash });
    expect(new Dec(seen.deposits[0].onChainFee).eq(new Dec((receipt.gasUsed * receipt.effectiveGasPrice).toString()).div('1e18'))).toBe(true);

    await mineAndScan(CONFIRMATIONS - 2); // the block holding it + 1: one short of the depth
    expect((await payment(p.id)).status).toBe('AWAITING');
    await mineAndScan(1);
    const credited = await payment(p.id);
    expect(credited.status).toBe('DEPOSITED');
    expect(credited.deposits[0].status).toBe('CONFIRMED');

    // The signer (this process holds the mnemonic) sweeps it to <xpub>/1/0, everything but the gas.
    const treasury = book.treasuryAddress();
    const swept = await eventually(async () => {
      const balance = await anvil.client.getBalance({ address: treasury });
      return balance > 0n && balance;
    }, 20_000, 'the sweep');
    // Everything but the gas (at most 21 000 × the max fee, a little of which stays behind as dust).
    expect(swept).toBeGreaterThan(parseEther('0.0099'));
    expect(swept).toBeLessThan(parseEther('0.01'));
    expect(await anvil.client.getBalance({ address: p.address })).toBeLessThan(parseEther('0.0001'));
  });

  test('an EUR payment in USDT on ETH is credited at depth, and the sweep tops up gas first', async () => {
    const p = await eurPayment('usdt-1', '92.00', 'USDT');
    expect(new Dec(p.amount).toFixed()).toBe('100');
    const hash = await sendUsdt(p.address, '100');
    await app.scan('ETH');
    const seen = await payment(p.id);
    expect(seen.status).toBe('AWAITING');
    expect(seen.deposits[0]).toMatchObject({ transactionId: hash, depositCurrency: 'USDT', depositAmount: '100', onChainFee: '0' });
    await mineAndScan(CONFIRMATIONS - 1);
    expect((await payment(p.id)).status).toBe('DEPOSITED');

    const treasury = book.treasuryAddress();
    const tokenBalance = (address: Hex) => anvil.client.readContract({ address: usdt, abi: ERC20, functionName: 'balanceOf', args: [address] });
    await eventually(async () => (await tokenBalance(treasury)) === parseUnits('100', 6), 40_000, 'the token sweep (gas top-up, then the transfer)');
    expect(await tokenBalance(p.address)).toBe(0n);
  });

  test('a deposit reorganised away before its depth is never credited', async () => {
    const p = await eurPayment('reorg-1', '25.00', 'ETH');
    await anvil.rpc('evm_setAutomine', [false]);
    await funder.sendTransaction({ account: funder.account!, chain: null, to: p.address, value: parseEther('0.01') });
    await anvil.mine(1);
    await anvil.rpc('evm_setAutomine', [true]);
    await app.scan('ETH');
    expect((await payment(p.id)).status).toBe('AWAITING');
    // Replace the block holding it with an empty one: the transfer is gone from the best chain.
    await anvil.rpc('anvil_reorg', [1, []]);
    await mineAndScan(CONFIRMATIONS + 2);
    const after = await payment(p.id);
    expect(after.status).not.toBe('DEPOSITED');
    expect(after.deposits.map((d: { status: string }) => d.status)).toEqual(['FAILED']);
    const [credit] = await app.db.sql`select count(*)::int as n from deposits where payment_id = ${p.id} and credited`;
    expect(credit!.n).toBe(0);
  });
});

/** A withdrawal of `amount` of `currency` on ETH to `payee`, from a funded merchant balance: its id. */
async function withdraw(clientWithdrawalId: string, currency: 'ETH' | 'USDT', payee: Hex, amount: string): Promise<string> {
  await postEntries(app.db.db, [{ businessId: app.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '10000', kind: 'TEST' }], app.clock.now());
  const created = await app.signed('POST', '/v1/withdrawals', {
    clientWithdrawalId, businessId: app.business.businessId, withdrawCurrency: currency, network: 'ETH', address: payee, amount,
  });
  expect(created.statusCode, created.body).toBe(200);
  return created.json().withdrawalId as string;
}

async function withdrawal(id: string) {
  return (await app.signed('GET', `/v1/withdrawals/${id}`)).json();
}

/** The hash a withdrawal was sent with, once its job has sent it. */
async function sentHash(id: string): Promise<Hex> {
  return eventually(async () => ((await withdrawal(id)).transactionId as Hex | null) ?? null, 20_000, 'the withdrawal sent');
}

/** The withdrawal callback about `id`, once delivered. */
async function callbackFor(id: string) {
  return eventually(async () => app.receiver.hitsFor('/withdrawals').find((h) => JSON.parse(h.body).withdrawalId === id), 20_000, 'the withdrawal callback');
}

/** Runs `fn` with blocks mined only by hand (what it sends waits in the pool); automine is back on after. */
async function withoutAutomine<T>(fn: () => Promise<T>): Promise<T> {
  await anvil.rpc('evm_setAutomine', [false]);
  try {
    return await fn();
  } finally {
    await anvil.rpc('evm_setAutomine', [true]);
  }
}

/** The signer's pass after each of `n` blocks mined. */
async function mineAndSettle(n: number) {
  for (let i = 0; i < n; i++) {
    await anvil.mine(1);
    await app.payouts();
  }
}

describe('payouts by the signer', () => {
  test('a withdrawal is paid on chain, PROCESSING with its hash until its block is CONFIRMATIONS deep, then COMPLETED with the signed callback', async () => {
    await anvil.setBalance(book.treasuryAddress(), parseEther('5'));
    const payee = '0x00000000000000000000000000000000000a11ce';
    const id = await withdraw('w-live-1', 'ETH', payee, '0.25');
    const hash = await sentHash(id);
    const receipt = await anvil.mined(hash);
    expect(receipt.status).toBe('success');
    // In a block (the first confirmation) and one more: not final yet, and no callback says it is.
    await mineAndSettle(CONFIRMATIONS - 2);
    expect(await withdrawal(id)).toMatchObject({ status: 'PROCESSING', transactionId: hash, completedAt: null });
    expect(app.receiver.hitsFor('/withdrawals')).toEqual([]);
    await mineAndSettle(1);
    const hit = await callbackFor(id);
    const body = JSON.parse(hit.body);
    expect(body).toMatchObject({ status: 'COMPLETED', transactionId: hash, actualWithdrawAmount: '0.25' });
    const tx = await anvil.client.getTransaction({ hash });
    expect(tx.to?.toLowerCase()).toBe(payee);
    expect(tx.from.toLowerCase()).toBe(book.treasuryAddress().toLowerCase());
    expect(tx.value).toBe(parseEther('0.25'));
    expect(verifyCallback(app.business.callbackSecret, headersOf(hit), hit.body, { now: app.clock.now() })).toMatchObject({ transactionId: hash });
    // Completed at the time of the block that holds it.
    const block = await anvil.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(await withdrawal(id)).toMatchObject({ status: 'COMPLETED', transactionId: hash, actualWithdrawAmount: '0.25', completedAt: Number(block.timestamp) });
    const events = await app.db.sql<{ from_status: string; to_status: string; reason: string }[]>`
      select from_status, to_status, reason from events where entity_type = 'withdrawal' and entity_id = ${id} order by id`;
    expect(events.map((e) => `${e.from_status}→${e.to_status}`)).toEqual(['null→PROCESSING', 'PROCESSING→PROCESSING', 'PROCESSING→COMPLETED']);
  });

  test('a refund is PENDING with its hash once sent, and CONFIRMED at its block\'s time once that block is CONFIRMATIONS deep', async () => {
    await anvil.setBalance(book.treasuryAddress(), parseEther('5'));
    const p = await eurPayment('refund-live', '92.00', 'USDT');
    await sendEth(p.address, '0.02'); // ETH to a USDT payment: refunded in full, less the network fee
    await mineAndScan(CONFIRMATIONS - 1);
    const refundOf = async () => (await payment(p.id)).deposits[0].refund;
    const sent = await eventually(async () => ((await refundOf())?.transactionId ? await refundOf() : null), 20_000, 'the refund sent');
    expect(sent).toMatchObject({ status: 'PENDING', reason: 'CURRENCY_MISMATCH' });
    expect(sent.confirmedAt).toBeUndefined();
    const receipt = await anvil.mined(sent.transactionId as Hex);
    const tx = await anvil.client.getTransaction({ hash: sent.transactionId as Hex });
    expect(tx.to?.toLowerCase()).toBe(funder.account!.address.toLowerCase());
    expect(tx.value).toBe(parseEther(new Dec(sent.amount).sub(sent.fee ?? '0').toFixed()));
    // The deposit's sweep mines blocks of its own meanwhile: the depth is read around each pass.
    const depth = async () => Number((await anvil.client.getBlockNumber({ cacheTime: 0 })) - receipt.blockNumber) + 1;
    for (let status = 'PENDING'; status === 'PENDING'; ) {
      const before = await depth();
      await app.payouts();
      status = (await refundOf()).status;
      if (status === 'PENDING') expect(before).toBeLessThan(CONFIRMATIONS);
      else expect(await depth()).toBeGreaterThanOrEqual(CONFIRMATIONS);
      await anvil.mine(1);
    }
    const block = await anvil.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(await refundOf()).toMatchObject({ status: 'CONFIRMED', transactionId: sent.transactionId, confirmedAt: Number(block.timestamp) });
  });

  test('a payout whose block is reorganised away before its depth is sent again, the same transaction, and completes once deep enough', async () => {
    await anvil.setBalance(book.treasuryAddress(), parseEther('5'));
    const payee = '0x00000000000000000000000000000000000c0ffe';
    const id = await withdraw('w-live-reorg', 'ETH', payee, '0.2');
    const hash = await sentHash(id);
    await anvil.mined(hash);
    await app.payouts(); // seen in its block
    // The block holding it is replaced by an empty one, and the node forgets the transaction.
    await anvil.rpc('anvil_reorg', [1, []]);
    await anvil.rpc('anvil_dropTransaction', [hash]);
    expect(await anvil.client.getTransactionReceipt({ hash }).catch(() => null)).toBeNull();
    await mineAndSettle(CONFIRMATIONS + 1); // the pass finds it gone, then sends the stored bytes again
    expect((await anvil.mined(hash)).status).toBe('success');
    await mineAndSettle(CONFIRMATIONS);
    expect(await withdrawal(id)).toMatchObject({ status: 'COMPLETED', transactionId: hash });
    // Paid once: the payee holds exactly the amount.
    expect(await anvil.client.getBalance({ address: payee })).toBe(parseEther('0.2'));
  });

  test('a token payout the chain runs and reverts fails the withdrawal, and the merchant gets the amount back', async () => {
    await anvil.setBalance(book.treasuryAddress(), parseEther('5'));
    await anvil.mined(await funder.writeContract({ account: funder.account!, chain: null, address: usdt, abi: ERC20, functionName: 'mint', args: [book.treasuryAddress(), parseUnits('500', 6)] }));
    const before = (await app.signed('GET', '/v1/balances')).json();
    const { id, hash } = await withoutAutomine(async () => {
      const id = await withdraw('w-live-revert', 'USDT', '0x00000000000000000000000000000000000d00d0', '100');
      const hash = await sentHash(id);
      // Before a block takes it, the treasury's USDT is gone (as an issuer freezing it): the transfer reverts.
      await anvil.rpc('anvil_setStorageAt', [usdt, balanceSlot(book.treasuryAddress()), `0x${'0'.repeat(64)}`]);
      await anvil.mine(1);
      return { id, hash };
    });
    expect((await anvil.client.getTransactionReceipt({ hash })).status).toBe('reverted');
    await mineAndSettle(CONFIRMATIONS - 1);
    expect(JSON.parse((await callbackFor(id)).body)).toMatchObject({ status: 'FAILED', withdrawalId: id });
    expect(await withdrawal(id)).toMatchObject({ status: 'FAILED', transactionId: hash });
    // The debit is credited back (the 10000 EUR the helper posted is there too).
    const after = (await app.signed('GET', '/v1/balances')).json();
    const eur = (b: { balances: { currency: string; available: string }[] }) => new Dec(b.balances.find((x) => x.currency === 'EUR')!.available);
    expect(eur(after).sub(eur(before)).toFixed()).toBe('10000');
  });
});

describe('a payout the market outbids', () => {
  test('is replaced at the market fees by the signer, mined, and the withdrawal then shows the hash on chain (with an event keeping the old one)', async () => {
    await anvil.setBalance(book.treasuryAddress(), parseEther('5'));
    const { id, first } = await withoutAutomine(async () => {
      const id = await withdraw('w-live-bump', 'ETH', '0x00000000000000000000000000000000000b0b00', '0.1');
      const first = await sentHash(id);
      // Fees jump to four times what it offers before any block takes it.
      const offered = (await anvil.client.getTransaction({ hash: first })).maxFeePerGas!;
      await anvil.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(offered * 4n).toString(16)}`]);
      await anvil.mine(1);
      await app.payouts();
      await anvil.mine(1);
      return { id, first };
    });
    await mineAndSettle(CONFIRMATIONS);
    const read = await withdrawal(id);
    expect(read.status).toBe('COMPLETED');
    expect(read.transactionId).not.toBe(first);
    const receipt = await anvil.mined(read.transactionId as Hex);
    expect(receipt.status).toBe('success');
    // the same nonce: the one first sent can never be mined too
    const [stored] = await app.db.sql<{ nonce: string }[]>`select nonce::text from evm_transactions where id = ${`withdrawal:${id}`}`;
    expect((await anvil.client.getTransaction({ hash: read.transactionId as Hex })).nonce).toBe(Number(stored!.nonce));
    await expect(anvil.client.getTransactionReceipt({ hash: first })).rejects.toThrow();
    const [event] = await app.db.sql<{ from_status: string; to_status: string; data: { previousTransactionId: string; transactionId: string } }[]>`
      select from_status, to_status, data from events where entity_type = 'withdrawal' and entity_id = ${id} and data ? 'previousTransactionId'`;
    expect(event).toMatchObject({ from_status: 'PROCESSING', to_status: 'PROCESSING', data: { previousTransactionId: first, transactionId: read.transactionId } });
  });
});

describe('health', () => {
  test('/ready and /metrics show the network; a stopped node fails /ready, and a deposit made before it is found after it returns', async () => {
    await app.scan('ETH');
    const ready = await app.app.inject({ url: '/ready' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().networks.ETH).toMatchObject({ ok: true, lag: 0 });
    const metrics = (await app.app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/kassa_chain_up\{network="ETH"\} 1/);
    expect(metrics).toMatch(/kassa_chain_height\{network="ETH"\} \d+/);
    expect(metrics).toMatch(/kassa_chain_reorgs_total\{network="ETH"\} [1-9]/);
    // The earlier reorg took a deposit before its depth: nothing credited was reorganised away.
    expect(metrics).toMatch(/kassa_chain_credited_off_chain\{network="ETH"\} 0\n/);
  });
});
