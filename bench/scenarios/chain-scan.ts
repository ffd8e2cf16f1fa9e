/**
 * Scenario 6. Chain scanning on anvil: BLOCKS blocks, each with
 * TRANSFERS_PER_BLOCK ERC-20 Transfer logs (TXS_PER_BLOCK `multiTransfer`
 * transactions of the solc-compiled test token), WATCHED watched addresses of
 * which every WATCHED_EVERY-th transfer pays one. Kassa's EvmScanner catches
 * up over all of them (fetch, check, store blocks and deposits, confirm,
 * deliver each report to a sink), against the raw rate of fetching the same
 * blocks (with their transactions) and Transfer logs over the same RPC client,
 * in the same ranges and at the same concurrency, and doing nothing with them.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { encodeFunctionData, parseAbiItem, toEventSelector, type Hex } from 'viem';
import { createEvmClient } from '../../server/adapters/chain/evm/rpc.js';
import { EvmScanner } from '../../server/adapters/chain/evm/scanner.js';
import { blockRanges } from '../../server/adapters/chain/evm/scanner.rules.js';
import type { DepositReport } from '../../server/adapters/chain/evm/types.js';
import { startAnvil } from '../../test/adapters/evm/anvil.js';
import { deployTestToken } from '../../test/adapters/evm/erc20.js';
import { createWalletClient, http } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC } from '../../test/adapters/evm/anvil.js';
import type { BenchContext } from '../context.js';
import { makeRow, type Row } from '../report.js';

const S = '6 chain scan';
const TXS_PER_BLOCK = 5;
const TRANSFERS_PER_TX = 10;
const TRANSFERS_PER_BLOCK = TXS_PER_BLOCK * TRANSFERS_PER_TX;
const WATCHED = 10_000;
/** One transfer in this many pays a watched address (the rest go to strangers, as on a real chain). */
const WATCHED_EVERY = 10;
const CONFIRMATIONS = 12;
/** The scanner's defaults, used by the raw fetch too. */
const BATCH = 50;
const CONCURRENCY = 4;
const TRANSFER_TOPIC = toEventSelector(parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'));

export async function chainScanScenario(ctx: BenchContext): Promise<Row[]> {
  const { options } = ctx;
  const blocks = options.scanBlocks;
  options.log(`  chain scan: anvil, ${blocks} blocks × ${TRANSFERS_PER_BLOCK} token transfers, ${WATCHED} watched addresses`);
  const anvil = await startAnvil(['--no-mining']);
  const stopAnvil = ctx.cleanup.add('anvil', () => anvil.stop());
  const sql = postgres(ctx.db.url, { max: 4, onnotice: () => {} });
  const stopSql = ctx.cleanup.add('chain scan pool', () => sql.end({ timeout: 5 }));
  try {
    // The engine's tables come with the bench database's migrations (0005).
    const wallet = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
    const from = wallet.account!.address;
    // --no-mining: each step is mined by hand (anvil_mine), so a block holds exactly what was sent for it.
    const deploying = deployTestToken(wallet, anvil.client);
    await waitForPending(anvil);
    await anvil.mine();
    const token = await deploying;
    await anvil.rpc('eth_sendTransaction', [{ from, to: token.address, data: encodeFunctionData({ abi: token.abi, functionName: 'mint', args: [from, 10n ** 30n] }) }]);
    await anvil.mine();
    // Explicit nonces: anvil would give transactions sent side by side the same one.
    let nonce = await anvil.client.getTransactionCount({ address: from, blockTag: 'pending' });

    const watchedList = Array.from({ length: WATCHED }, () => `0x${randomBytes(20).toString('hex')}` as Hex);
    const watched = new Set(watchedList.map((a) => a.toLowerCase()));
    const setupStarted = performance.now();
    const first = (await anvil.client.getBlockNumber()) + 1n;
    let paid = 0;
    for (let b = 0; b < blocks; b++) {
      await Promise.all(
        Array.from({ length: TXS_PER_BLOCK }, (_, t) => {
          const to: Hex[] = [];
          const value: bigint[] = [];
          for (let k = 0; k < TRANSFERS_PER_TX; k++) {
            const n = (b * TXS_PER_BLOCK + t) * TRANSFERS_PER_TX + k;
            if (n % WATCHED_EVERY === 0) {
              to.push(watchedList[paid++ % WATCHED]!);
            } else to.push(`0x${randomBytes(20).toString('hex')}`);
            value.push(BigInt(1_000 + (n % 997)));
          }
          const data = encodeFunctionData({ abi: token.abi, functionName: 'multiTransfer', args: [to, value] });
          return anvil.rpc('eth_sendTransaction', [{ from, to: token.address, data, gas: '0x1e8480', nonce: `0x${(nonce + t).toString(16)}` }]);
        }),
      );
      nonce += TXS_PER_BLOCK;
      await anvil.mine();
    }
    // Confirm the last transfers too: the scan ends with every deposit CONFIRMED.
    await anvil.mine(CONFIRMATIONS);
    const last = first + BigInt(blocks) - 1n;
    const tip = await anvil.client.getBlockNumber();
    options.log(`  chain scan: ${blocks} blocks mined in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s (blocks ${first}–${last}, tip ${tip})`);

    // --- raw: the same blocks and logs over the same client, nothing done with them ---------------
    const client = createEvmClient(anvil.url, { retryCount: 0 });
    const rawStarted = performance.now();
    let rawLogs = 0;
    let rawTxs = 0;
    for (const [lo, hi] of blockRanges(first, tip, BATCH)) {
      const heights: bigint[] = [];
      for (let h = lo; h <= hi; h++) heights.push(h);
      // Plain JSON-RPC, nothing decoded: the least any scanner must do to see these blocks and logs.
      const fetchBlocks = async () => {
        for (let i = 0; i < heights.length; i += CONCURRENCY) {
          const chunk = await Promise.all(
            heights.slice(i, i + CONCURRENCY).map((h) => client.request({ method: 'eth_getBlockByNumber', params: [`0x${h.toString(16)}`, true] }) as Promise<unknown>),
          );
          for (const block of chunk as { transactions: unknown[] }[]) rawTxs += block.transactions.length;
        }
      };
      const [, logs] = await Promise.all([
        fetchBlocks(),
        client.request({ method: 'eth_getLogs', params: [{ address: [token.address], topics: [TRANSFER_TOPIC], fromBlock: `0x${lo.toString(16)}`, toBlock: `0x${hi.toString(16)}` }] }) as Promise<unknown[]>,
      ]);
      rawLogs += logs.length;
    }
    const rawS = (performance.now() - rawStarted) / 1000;
    const scanned = Number(tip - first + 1n);

    // --- Kassa's scanner from the block before `first` to the tip --------------------------------
    const reports: DepositReport[] = [];
    const scanner = new EvmScanner({
      sql,
      network: 'ETH',
      client: createEvmClient(anvil.url, { retryCount: 0 }),
      watched,
      tokens: [{ currency: 'USDT', address: token.address }],
      confirmations: CONFIRMATIONS,
      startHeight: first,
      sink: async (report) => {
        reports.push(report);
      },
    });
    options.log(`  chain scan: Kassa's EvmScanner over ${scanned} blocks`);
    const scanStarted = performance.now();
    const result = await scanner.tick();
    const scanS = (performance.now() - scanStarted) / 1000;
    const seen = reports.filter((r) => r.state === 'SEEN').length;
    const confirmed = reports.filter((r) => r.state === 'CONFIRMED').length;
    const expected = blocks * TRANSFERS_PER_BLOCK / WATCHED_EVERY;
    if (result?.height !== tip) throw new Error(`the scanner stopped at ${String(result?.height)}, not the tip ${tip}`);
    if (seen !== expected || confirmed !== expected) throw new Error(`the scanner reported ${seen} SEEN and ${confirmed} CONFIRMED, expected ${expected} each`);
    if (rawLogs !== blocks * TRANSFERS_PER_BLOCK + 0) throw new Error(`the raw fetch found ${rawLogs} Transfer logs, expected ${blocks * TRANSFERS_PER_BLOCK}`);

    return [
      makeRow({ scenario: S, name: 'chain scan vs raw block+log fetch', metric: `blocks/s, ${TRANSFERS_PER_BLOCK} token transfers a block, ${WATCHED} watched`, unit: 'blocks/s', kassa: scanned / scanS, limit: scanned / rawS, digits: 0,
        target: { of: 'ratio', op: '>=', value: 0.5 },
        note: `${scanned} blocks on anvil (${rawTxs} transactions, ${rawLogs} Transfer logs, 1 in ${WATCHED_EVERY} to a watched address): the scanner stored ${expected} deposits and delivered ${seen} SEEN + ${confirmed} CONFIRMED reports (${CONFIRMATIONS} confirmations) in ${scanS.toFixed(2)} s; limit: the same eth_getBlockByNumber (with transactions, ${CONCURRENCY} at a time) and eth_getLogs calls in ranges of ${BATCH} through the same viem client, JSON parsed and nothing decoded, ${rawS.toFixed(2)} s` }),
    ];
  } finally {
    await stopSql();
    await stopAnvil();
  }
}

/** Until anvil holds a pending transaction (the deployment just sent). */
async function waitForPending(anvil: Awaited<ReturnType<typeof startAnvil>>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const status = await anvil.rpc<{ pending: Hex }>('txpool_status');
    if (BigInt(status.pending) > 0n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the token deployment never reached the transaction pool');
}
