/**
 * The scanner against a real anvil and a real PostgreSQL: native and token
 * deposits to xpub-derived addresses, confirmations, two transfers in one
 * block, a reorg, restart and node outage.
 */
import { randomBytes } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createWalletClient, encodeFunctionData, formatUnits, http, parseEther, parseGwei, type Hex, type WalletClient } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addressBook, type EvmAddressBook } from '../../../server/adapters/chain/evm/keys.js';
import { createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { EvmScanner, type ScannerOptions } from '../../../server/adapters/chain/evm/scanner.js';
import type { DepositReport } from '../../../server/adapters/chain/evm/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ANVIL_MNEMONIC, startAnvil, until, type Anvil } from './anvil.js';
import { deployTestToken } from './erc20.js';

const DEPOSIT_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const CONFIRMATIONS = 3;

let anvil: Anvil;
let database: TestDatabase;
let wallet: WalletClient;
let book: EvmAddressBook;
let token: { address: Hex; abi: readonly unknown[] };
let watched: Set<string>;
const reports: DepositReport[] = [];
const sink = async (report: DepositReport) => {
  reports.push(report);
};

function scanner(overrides: Partial<ScannerOptions> = {}): EvmScanner {
  return new EvmScanner({
    sql: database.sql,
    network: 'ETH',
    client: createEvmClient(anvil.url, { retryCount: 0, timeoutMs: 2_000 }),
    watched,
    tokens: [{ currency: 'USDT', address: token.address }],
    confirmations: CONFIRMATIONS,
    sink,
    ...overrides,
  });
}

/** Sends and (unless automine is off) waits until mined. */
async function sendEth(to: Hex, ether: string, wait = true): Promise<Hex> {
  const hash = await wallet.sendTransaction({ account: wallet.account!, chain: null, to, value: parseEther(ether) });
  if (wait) await anvil.mined(hash);
  return hash;
}

async function sendUsdt(to: Hex, baseUnits: bigint, wait = true): Promise<Hex> {
  const hash = await wallet.writeContract({ account: wallet.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'transfer', args: [to, baseUnits] } as never);
  if (wait) await anvil.mined(hash);
  return hash;
}

/** An ETH transfer signed but not sent: the same bytes can be sent again after a reorg. */
async function signEth(to: Hex, ether: string): Promise<Hex> {
  const request = await wallet.prepareTransactionRequest({ account: wallet.account!, chain: null, to, value: parseEther(ether) });
  return wallet.signTransaction({ ...request, account: wallet.account!, chain: null } as never);
}

/** Runs `send` with automining off, then mines one block holding everything it sent. */
async function inOneBlock(send: () => Promise<unknown>): Promise<void> {
  await anvil.rpc('evm_setAutomine', [false]);
  await send();
  await anvil.mine(1);
  await anvil.rpc('evm_setAutomine', [true]);
}

/** `blocks` times: scan, then mine one block. */
async function scanThenMine(s: EvmScanner, blocks: number): Promise<void> {
  for (let i = 0; i < blocks; i++) {
    await s.tick();
    await anvil.mine(1);
  }
}

/** `blocks` times: mine one block, then scan (`scan`: a scanner's tick, its failures kept or not). */
async function mineThenScan(scan: () => Promise<unknown>, blocks: number): Promise<void> {
  for (let i = 0; i < blocks; i++) {
    await anvil.mine(1);
    await scan();
  }
}

/** Reports produced since `mark` (an index into `reports`), in a compact comparable form. */
function since(mark: number): string[] {
  return reports.slice(mark).map((r) => `${r.state} ${r.currency} ${r.amount} → ${r.toAddress.slice(0, 8)} #${r.outputIndex} c${r.confirmations}`);
}

beforeAll(async () => {
  [anvil, database] = await Promise.all([startAnvil(), createTestDatabase()]);
  wallet = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  const xpub = HDKey.fromMasterSeed(mnemonicToSeedSync(DEPOSIT_MNEMONIC)).derive("m/44'/60'/0'").publicExtendedKey;
  book = addressBook(xpub);
  // A realistic watched set of 10,000 addresses, looked up per transaction and log: the first 20
  // derived from the xpub (the ones paid here), the rest random (the app loads them from its rows,
  // it does not re-derive them; one public derivation costs ~2 ms here).
  watched = new Set(Array.from({ length: 20 }, (_, i) => book.depositAddress(i).toLowerCase()));
  while (watched.size < 10_000) watched.add(`0x${randomBytes(20).toString('hex')}`);
  token = await deployTestToken(wallet, anvil.client);
  await anvil.mined(await wallet.writeContract({ account: wallet.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'mint', args: [wallet.account!.address, 1_000_000_000_000n] } as never));
  // Start scanning after the setup blocks.
  const first = scanner({ startHeight: (await anvil.client.getBlockNumber()) + 1n });
  await first.tick();
});

afterAll(async () => {
  await anvil?.stop();
  await database?.drop();
});

describe('EVM scanner on anvil', () => {
  test('a native and a token deposit are SEEN, then CONFIRMED only at the configured depth', async () => {
    const mark = reports.length;
    const d0 = book.depositAddress(0);
    const d1 = book.depositAddress(19);
    const ethHash = await sendEth(d0, '1.25');
    const usdtHash = await sendUsdt(d1, 12_500_000n);
    const s = scanner();
    await s.tick();
    expect(since(mark)).toEqual([
      `SEEN ETH 1.25 → ${d0.slice(0, 8)} #0 c2`,
      `SEEN USDT 12.5 → ${d1.slice(0, 8)} #0 c1`,
    ]);
    expect(reports[mark]).toMatchObject({ network: 'ETH', txHash: ethHash, fromAddress: wallet.account!.address, toAddress: d0 });
    expect(reports[mark + 1]).toMatchObject({ txHash: usdtHash, toAddress: d1 });
    // What the senders paid the network, in the deposit's currency: the ETH transfer's gas from its
    // receipt; the token transfer's gas is paid in ETH, so none in USDT.
    const ethReceipt = await anvil.client.getTransactionReceipt({ hash: ethHash });
    expect(ethReceipt.gasUsed).toBe(21_000n);
    expect(reports[mark]!.onChainFee).toBe(formatUnits(ethReceipt.gasUsed * ethReceipt.effectiveGasPrice, 18));
    expect(Number(reports[mark]!.onChainFee)).toBeGreaterThan(0);
    expect(reports[mark + 1]!.onChainFee).toBe('0');
    // The USDT block has 1 confirmation, the ETH block 2: one more block confirms ETH (3) but not USDT (2).
    await anvil.mine(1);
    await s.tick();
    expect(since(mark + 2)).toEqual([`CONFIRMED ETH 1.25 → ${d0.slice(0, 8)} #0 c3`]);
    await anvil.mine(1);
    await s.tick();
    expect(since(mark + 3)).toEqual([`CONFIRMED USDT 12.5 → ${d1.slice(0, 8)} #0 c3`]);
    await anvil.mine(5);
    expect((await s.tick())?.delivered).toBe(0);
  });

  test('two transfers in one block (and two logs in one transaction) are each counted once', async () => {
    const mark = reports.length;
    const [a, b] = [book.depositAddress(2), book.depositAddress(3)];
    await anvil.rpc('evm_setAutomine', [false]);
    try {
      await sendEth(a, '0.1', false);
      await sendEth(b, '0.2', false);
      await wallet.writeContract({ account: wallet.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'multiTransfer', args: [[a, b], [1n, 2_000_001n]] } as never);
      await anvil.mine(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
    const s = scanner();
    await s.tick();
    await anvil.mine(CONFIRMATIONS - 1);
    await s.tick();
    await s.tick();
    const lines = since(mark);
    expect(lines.filter((l) => l.startsWith('SEEN'))).toHaveLength(4);
    expect(lines.filter((l) => l.startsWith('CONFIRMED'))).toHaveLength(4);
    expect(lines).toHaveLength(8);
    const tokenReports = reports.slice(mark).filter((r) => r.currency === 'USDT' && r.state === 'CONFIRMED');
    expect(tokenReports.map((r) => r.amount).sort()).toEqual(['0.000001', '2.000001']);
    // Two logs of one transaction: same hash, different output index (the log index).
    expect(tokenReports[0]!.txHash).toBe(tokenReports[1]!.txHash);
    expect(tokenReports[0]!.outputIndex).not.toBe(tokenReports[1]!.outputIndex);
    const [row] = await database.sql<{ count: string }[]>`select count(*) from evm_deposits where state = 'CONFIRMED'`;
    expect(Number(row?.count)).toBe(6);
  });

  test('a transfer reorged away is never CONFIRMED and is DROPPED; one re-included elsewhere is confirmed once', async () => {
    const mark = reports.length;
    const gone = book.depositAddress(4);
    const moved = book.depositAddress(5);
    // `moved` is signed now and handed to anvil_reorg to be re-included in the replacement chain.
    const raw = await signEth(moved, '0.5');
    let goneHash: Hex | undefined;
    await inOneBlock(async () => {
      await anvil.rpc('eth_sendRawTransaction', [raw]);
      goneHash = await sendUsdt(gone, 7_000_000n, false);
    });
    const s = scanner();
    await s.tick();
    expect(since(mark).map((l) => l.split(' → ')[0])).toEqual(['SEEN ETH 0.5', 'SEEN USDT 7']);
    const before = await s.status();
    // Replace the last two blocks: `moved` goes into the new chain's first one (a lower height), the USDT transfer nowhere.
    await anvil.rpc('anvil_reorg', [2, [[raw, 0]]]);
    await anvil.mine(1);
    const afterReorg = await s.tick();
    expect(afterReorg?.reorgs).toBe(1);
    expect((await s.status()).reorgs).toBe(before.reorgs + 1);
    // Mine past the depth and the drop grace: the USDT transfer never confirms.
    await mineThenScan(() => s.tick(), CONFIRMATIONS + 1);
    const lines = since(mark);
    expect(lines.filter((l) => l.includes('USDT'))).toEqual([
      `SEEN USDT 7 → ${gone.slice(0, 8)} #0 c1`,
      `DROPPED USDT 7 → ${gone.slice(0, 8)} #0 c0`,
    ]);
    expect(lines.filter((l) => l.startsWith('CONFIRMED'))).toEqual([`CONFIRMED ETH 0.5 → ${moved.slice(0, 8)} #0 c3`]);
    expect(reports.some((r) => r.txHash === goneHash && r.state === 'CONFIRMED')).toBe(false);
    // The re-included one is anchored in its new block.
    const receipt = await anvil.client.getTransactionReceipt({ hash: reports.find((r) => r.toAddress === moved)!.txHash });
    const [row] = await database.sql<{ block_hash: string }[]>`select block_hash from evm_deposits where to_address = ${moved}`;
    expect(row?.block_hash).toBe(receipt.blockHash);
  });

  test('credited transfers reorganised away past their depth: counted while off the chain; one mined again leaves the count, one gone is DROPPED once and leaves it', async () => {
    const s = scanner();
    await s.tick();
    const before = await s.creditedOffChain();
    const mark = reports.length;
    const back = book.depositAddress(11);
    const gone = book.depositAddress(12);
    // `back` is signed now, so that the same transaction can be mined again after the reorg.
    const raw = await signEth(back, '0.7');
    await inOneBlock(async () => {
      await anvil.rpc('eth_sendRawTransaction', [raw]);
      await sendEth(gone, '0.8', false);
    });
    for (let i = 0; i <= CONFIRMATIONS && since(mark).filter((l) => l.startsWith('CONFIRMED')).length < 2; i++) {
      await s.tick();
      await anvil.mine(1);
    }
    expect(since(mark).filter((l) => l.startsWith('CONFIRMED')).sort()).toEqual([
      `CONFIRMED ETH 0.7 → ${back.slice(0, 8)} #0 c3`,
      `CONFIRMED ETH 0.8 → ${gone.slice(0, 8)} #0 c3`,
    ]);
    expect(await s.creditedOffChain()).toBe(before);
    const afterCredit = reports.length;

    // Replace every block since the transfers (and one more) with empty ones: both are gone past their depth.
    await anvil.rpc('anvil_reorg', [CONFIRMATIONS + 2, []]);
    await anvil.mine(1);
    expect((await s.tick())?.reorgs).toBe(1);
    expect(await s.creditedOffChain()).toBe(before + 2);

    // `back` is mined again; `gone` never is.
    await anvil.rpc('eth_sendRawTransaction', [raw]);
    await mineThenScan(() => s.tick(), CONFIRMATIONS + 2);
    // No second CONFIRMED for the one mined again; `gone` is DROPPED once, and Kassa's ingestion then
    // reverses its credit (test/modules/deposits/deposit-flows): resolved, it leaves the count too.
    expect(await s.creditedOffChain()).toBe(before);
    expect(since(afterCredit)).toEqual([`DROPPED ETH 0.8 → ${gone.slice(0, 8)} #0 c0`]);
  });

  test('a transfer back in the mempool past its grace is not DROPPED; one DROPPED and mined again later is SEEN and CONFIRMED again', async () => {
    const s = scanner();
    await s.tick();
    const mark = reports.length;
    const pending = book.depositAddress(13);
    const rawPending = await signEth(pending, '0.9');
    await inOneBlock(() => anvil.rpc('eth_sendRawTransaction', [rawPending]));
    await s.tick();
    expect(since(mark)).toEqual([`SEEN ETH 0.9 → ${pending.slice(0, 8)} #0 c1`]);
    // Reorganised away and back in the mempool, where no block can take it: the block gas limit is
    // lowered below 21,000 once it is there.
    await anvil.rpc('anvil_reorg', [1, []]);
    await anvil.rpc('evm_setAutomine', [false]);
    const { gasLimit } = await anvil.client.getBlock();
    try {
      await anvil.rpc('eth_sendRawTransaction', [rawPending]);
      await anvil.rpc('evm_setBlockGasLimit', ['0x4e20']);
      await mineThenScan(() => s.tick(), CONFIRMATIONS + 2);
      expect(since(mark)).toEqual([`SEEN ETH 0.9 → ${pending.slice(0, 8)} #0 c1`]);
      const [waiting] = await database.sql<{ state: string; block_number: string | null }[]>`
        select state, block_number from evm_deposits where to_address = ${pending}`;
      expect(waiting).toEqual({ state: 'SEEN', block_number: null });
    } finally {
      // Blocks can take it again: mined, and confirmed once, never dropped.
      await anvil.rpc('evm_setBlockGasLimit', [`0x${gasLimit.toString(16)}`]);
      await anvil.rpc('evm_setAutomine', [true]);
    }
    await mineThenScan(() => s.tick(), CONFIRMATIONS + 1);
    expect(since(mark).map((l) => l.split(' c')[0])).toEqual([`SEEN ETH 0.9 → ${pending.slice(0, 8)} #0`, `CONFIRMED ETH 0.9 → ${pending.slice(0, 8)} #0`]);

    // Confirmed, reorganised away past its grace (not in the mempool): DROPPED. Sent again later and
    // mined: a new round, SEEN and CONFIRMED again (Kassa then credits it again:
    // test/modules/deposits/deposit-flows, "mined again after its credit was reversed").
    const again = book.depositAddress(14);
    const rawAgain = await signEth(again, '0.6');
    const mark2 = reports.length;
    await anvil.rpc('eth_sendRawTransaction', [rawAgain]);
    await scanThenMine(s, CONFIRMATIONS);
    await s.tick();
    await anvil.rpc('anvil_reorg', [CONFIRMATIONS + 2, []]);
    await anvil.mine(1);
    await scanThenMine(s, CONFIRMATIONS + 2);
    await anvil.rpc('eth_sendRawTransaction', [rawAgain]);
    await scanThenMine(s, CONFIRMATIONS + 1);
    await s.tick();
    expect(since(mark2).map((l) => l.split(' c')[0])).toEqual(
      ['SEEN', 'CONFIRMED', 'DROPPED', 'SEEN', 'CONFIRMED'].map((state) => `${state} ETH 0.6 → ${again.slice(0, 8)} #0`),
    );
    const [row] = await database.sql<{ state: string; drops: number; reorged_after_credit: boolean }[]>`
      select state, drops, reorged_after_credit from evm_deposits where to_address = ${again}`;
    // its credit was reversed when it was dropped: back, it is not a credit off the chain any more
    expect(row).toEqual({ state: 'CONFIRMED', drops: 1, reorged_after_credit: false });
  });

  test('a token transfer mined again at another log index is another transfer: the old one is DROPPED, the new one confirmed', async () => {
    const s = scanner();
    await s.tick();
    // A second sender with tokens, whose transfer goes first in the block that mines ours again.
    const other = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 1 }), transport: http(anvil.url) });
    await sendUsdt(other.account!.address, 5_000_000n);
    await anvil.mine(2); // deeper than the reorganisation below
    const to = book.depositAddress(15);
    const transfer = (from: WalletClient, units: bigint, fees: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } = {}) =>
      from.prepareTransactionRequest({
        account: from.account!, chain: null, to: token.address, ...fees,
        data: encodeFunctionData({ abi: token.abi as never, functionName: 'transfer', args: [to, units] } as never),
      }).then((request) => from.signTransaction({ ...request, account: from.account!, chain: null } as never));
    const ours = await transfer(wallet, 3_000_000n);
    const mark = reports.length;
    await anvil.rpc('eth_sendRawTransaction', [ours]);
    await scanThenMine(s, CONFIRMATIONS);
    await s.tick();
    expect(since(mark).map((l) => l.split(' c')[0])).toEqual([`SEEN USDT 3 → ${to.slice(0, 8)} #0`, `CONFIRMED USDT 3 → ${to.slice(0, 8)} #0`]);
    await anvil.rpc('anvil_reorg', [CONFIRMATIONS + 2, []]);
    await anvil.mine(1);
    await s.tick();
    // Mined again behind another transfer (a higher tip goes first): its log is now #1 of its block.
    const first = await transfer(other, 1_000_000n, { maxFeePerGas: parseGwei('100'), maxPriorityFeePerGas: parseGwei('50') });
    await inOneBlock(async () => {
      await anvil.rpc('eth_sendRawTransaction', [first]);
      await anvil.rpc('eth_sendRawTransaction', [ours]);
    });
    await scanThenMine(s, CONFIRMATIONS + 2);
    await s.tick();
    const ourLines = since(mark).map((l) => l.split(' c')[0]!).filter((l) => l.includes('USDT 3 '));
    expect(ourLines.slice(2).sort()).toEqual([
      `CONFIRMED USDT 3 → ${to.slice(0, 8)} #1`,
      `DROPPED USDT 3 → ${to.slice(0, 8)} #0`,
      `SEEN USDT 3 → ${to.slice(0, 8)} #1`,
    ]);
  });

  test('a DROPPED report is marked delivered at once: a crash later in its batch never sends it again behind the transfer mined again', async () => {
    const s = scanner();
    await s.tick();
    const to = book.depositAddress(16);
    const raw = await signEth(to, '0.65');
    const mark = reports.length;
    await anvil.rpc('eth_sendRawTransaction', [raw]);
    await scanThenMine(s, CONFIRMATIONS);
    await s.tick();
    await anvil.rpc('anvil_reorg', [CONFIRMATIONS + 2, []]);
    // The app is down while the transfer is dropped and mined again: DROPPED, SEEN, CONFIRMED wait in one batch.
    const down = scanner({ sink: async () => { throw new Error('app down'); } });
    await mineThenScan(() => down.tick().catch(() => {}), CONFIRMATIONS + 2);
    await anvil.rpc('eth_sendRawTransaction', [raw]);
    await mineThenScan(() => down.tick().catch(() => {}), CONFIRMATIONS + 1);
    const waiting = await database.sql<{ state: string }[]>`
      select e.state from evm_deposit_events e join evm_deposits d using (network, tx_hash, output_index)
       where d.to_address = ${to} and e.delivered_at is null order by e.id`;
    expect(waiting.map((w) => w.state)).toEqual(['DROPPED', 'SEEN', 'CONFIRMED']);
    // When the app takes the SEEN behind it, the DROPPED is already marked delivered: a crash from
    // there on re-delivers only what follows it.
    let droppedMarkedBeforeNext: boolean | undefined;
    const watching = scanner({
      sink: async (r) => {
        if (r.state === 'SEEN' && r.toAddress === to && droppedMarkedBeforeNext === undefined) {
          const [dropped] = await database.sql<{ delivered: boolean }[]>`
            select e.delivered_at is not null as delivered from evm_deposit_events e join evm_deposits d using (network, tx_hash, output_index)
             where d.to_address = ${to} and e.state = 'DROPPED'`;
          droppedMarkedBeforeNext = dropped!.delivered;
        }
        await sink(r);
      },
    });
    await watching.tick();
    expect(droppedMarkedBeforeNext).toBe(true);
    expect(since(mark).map((l) => l.split(' c')[0])).toEqual(
      ['SEEN', 'CONFIRMED', 'DROPPED', 'SEEN', 'CONFIRMED'].map((state) => `${state} ETH 0.65 → ${to.slice(0, 8)} #0`),
    );
  });

  test('a new scanner instance on the same database emits nothing twice; an interrupted delivery is resumed once', async () => {
    const mark = reports.length;
    const restarted = scanner();
    expect((await restarted.tick())?.delivered).toBe(0);
    expect(since(mark)).toEqual([]);
    // The sink fails once: the report stays in the outbox and the next instance delivers it.
    const target = book.depositAddress(6);
    await sendEth(target, '0.3');
    let failures = 0;
    const flaky = scanner({ sink: async () => { failures++; throw new Error('app down'); } });
    await expect(flaky.tick()).rejects.toThrow('app down');
    expect(failures).toBe(1);
    const next = scanner();
    await next.tick();
    await anvil.mine(CONFIRMATIONS);
    await next.tick();
    await scanner().tick();
    expect(since(mark)).toEqual([`SEEN ETH 0.3 → ${target.slice(0, 8)} #0 c1`, `CONFIRMED ETH 0.3 → ${target.slice(0, 8)} #0 c4`]);
    // No (txHash, outputIndex) was ever CONFIRMED twice in the whole file without a DROPPED between
    // (the two transfers mined again after they were dropped, above, are the only ones confirmed twice).
    const paths = new Map<string, string[]>();
    for (const r of reports) paths.set(`${r.txHash}:${r.outputIndex}`, [...(paths.get(`${r.txHash}:${r.outputIndex}`) ?? []), r.state]);
    const confirmedTwiceInARound = [...paths.values()].filter((states) => /CONFIRMED,(SEEN,)*CONFIRMED/.test(states.join(',')));
    expect(confirmedTwiceInARound).toEqual([]);
    expect([...paths.values()].filter((states) => states.filter((x) => x === 'CONFIRMED').length > 1)).toEqual([['SEEN', 'CONFIRMED', 'DROPPED', 'SEEN', 'CONFIRMED'], ['SEEN', 'CONFIRMED', 'DROPPED', 'SEEN', 'CONFIRMED']]);
  });

  test('node outage: the scan fails and keeps its cursor; after it, the blocks mined meanwhile are caught up in capped ranges without loss', async () => {
    const mark = reports.length;
    const before = await scanner().status();
    const down = scanner({ client: createEvmClient('http://127.0.0.1:1', { retryCount: 0, timeoutMs: 500 }) });
    const targets = [book.depositAddress(7), book.depositAddress(8)];
    await sendEth(targets[0]!, '0.01');
    await anvil.mine(20);
    await sendUsdt(targets[1]!, 1n);
    await expect(down.tick()).rejects.toThrow();
    expect((await down.status()).height).toBe(before.height);
    // Back: small batches and a 3-block log cap, to cross many ranges.
    const up = scanner({ logRangeCap: 3, blocksPerBatch: 5 });
    await anvil.mine(CONFIRMATIONS);
    const result = await up.tick();
    expect(result?.height).toBe(await anvil.client.getBlockNumber());
    expect(since(mark).map((l) => l.replace(/ c\d+$/, ''))).toEqual([
      `SEEN ETH 0.01 → ${targets[0]!.slice(0, 8)} #0`,
      `CONFIRMED ETH 0.01 → ${targets[0]!.slice(0, 8)} #0`,
      `SEEN USDT 0.000001 → ${targets[1]!.slice(0, 8)} #0`,
      `CONFIRMED USDT 0.000001 → ${targets[1]!.slice(0, 8)} #0`,
    ]);
    const status = await up.status();
    expect(status.lag).toBe(0n);
    expect(status.lastScanAt).toBeInstanceOf(Date);
  });

  test('run() scans on its own every interval until aborted', async () => {
    const mark = reports.length;
    const target = book.depositAddress(9);
    const controller = new AbortController();
    const errors: unknown[] = [];
    const running = scanner().run(controller.signal, 50, (error) => errors.push(error));
    await sendEth(target, '0.02');
    await anvil.mine(CONFIRMATIONS);
    await until(async () => reports.length, (n) => n >= mark + 2);
    controller.abort();
    await running;
    expect(errors).toEqual([]);
    expect(since(mark).map((l) => l.replace(/ c\d+$/, ''))).toEqual([
      `SEEN ETH 0.02 → ${target.slice(0, 8)} #0`,
      `CONFIRMED ETH 0.02 → ${target.slice(0, 8)} #0`,
    ]);
  });

  test('scanners of the same network racing (two processes) report each transfer once', async () => {
    const mark = reports.length;
    const target = book.depositAddress(10);
    await sendEth(target, '0.03');
    await anvil.mine(CONFIRMATIONS);
    // Whichever order they take the advisory lock in (a loser's tick returns null), one report of each.
    await Promise.all([scanner().tick(), scanner().tick(), scanner().tick()]);
    await scanner().tick();
    expect(since(mark).map((l) => l.replace(/ c\d+$/, ''))).toEqual([
      `SEEN ETH 0.03 → ${target.slice(0, 8)} #0`,
      `CONFIRMED ETH 0.03 → ${target.slice(0, 8)} #0`,
    ]);
  });

  // Last: it leaves this file's scanner stopped on purpose.
  test('a reorg deeper than the kept blocks stops the scanner for an operator instead of guessing; the cursor stays', async () => {
    const shallow = scanner({ keepBlocks: 2 });
    await anvil.mine(3);
    await shallow.tick();
    const [kept] = await database.sql<{ count: string }[]>`select count(*) from evm_blocks where network = 'ETH'`;
    expect(Number(kept?.count)).toBeLessThanOrEqual(3);
    const before = await shallow.status();
    await anvil.rpc('anvil_reorg', [5, []]);
    await expect(shallow.tick()).rejects.toThrow(/reorg deeper than the \d+ kept blocks/);
    expect((await shallow.status()).height).toBe(before.height);
  });
});
