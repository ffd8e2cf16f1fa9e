/**
 * The EVM block scanner (ETH, BSC): follows the node's best chain from a
 * `(height, hash)` cursor kept in PostgreSQL, finds native and token
 * transfers to watched addresses, and reports them SEEN, CONFIRMED (at the
 * configured depth) or DROPPED (reorged away and not back) to a sink.
 *
 * Every change of a deposit writes an outbox row (`evm_deposit_events`) in
 * the same transaction as the blocks that caused it and the cursor; the sink
 * is called afterwards, in order, and the row marked delivered. So a crash or
 * a node outage at any point loses nothing, and a restart re-delivers at most
 * the one report whose delivery was interrupted (the sink is idempotent per
 * (network, txHash, outputIndex, state)); CONFIRMED is unique in the table.
 */
import type postgres from 'postgres';
import { withSessionLock } from '../session-lock.js';
import { BaseError, formatUnits, parseAbi, parseAbiItem, RpcError, RpcRequestError, toEventSelector, type Address, type Hex, type PublicClient } from 'viem';
import {
  blockRanges,
  confirmationsAt,
  decodeTransferLog,
  isContiguous,
  nativeTransfers,
  nextState,
  tokenTransfers,
  type RpcLog,
  type Transfer,
  type TransferLog,
  type WatchedAddresses,
} from './scanner.rules.js';
import { NATIVE_CURRENCY, type DepositReport, type DepositSink, type EvmNetwork, type TokenContract } from './types.js';

type Sql = postgres.Sql;

const TRANSFER_TOPIC = toEventSelector(parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'));

/** A block with its transactions as eth_getBlockByNumber returns it (only what the scanner reads). */
type RpcBlock = { number: Hex; hash: Hex; parentHash: Hex; transactions: Array<{ hash: Hex; from: Hex; to: Hex | null; value: Hex }> };
const DECIMALS_ABI = parseAbi(['function decimals() view returns (uint8)']);

export type ScannerOptions = {
  sql: Sql;
  network: EvmNetwork;
  client: PublicClient;
  /** Lower-case deposit addresses; consulted on every block, so it may grow while the scanner runs. */
  watched: WatchedAddresses;
  tokens: TokenContract[];
  /**
   * Lower-case addresses of Kassa's own senders, at least the treasury (`<xpub>/1/0`): what they
   * send to a deposit address (the gas top-up before a token sweep) is not a deposit.
   */
  ownSenders?: WatchedAddresses;
  /** `KASSA_<NET>_CONFIRMATIONS`. */
  confirmations: number;
  sink: DepositSink;
  /** Most blocks in one `eth_getLogs` call (providers cap ranges; default 500). */
  logRangeCap?: number;
  /** Most blocks fetched before they are written (memory; default 50). */
  blocksPerBatch?: number;
  /** Blocks fetched at once (default 4). */
  blockConcurrency?: number;
  /** Height of the first block to scan when there is no cursor yet (default: the next block after the current tip). */
  startHeight?: bigint;
  /** A reorged-away transfer that has not reappeared after this many more blocks is DROPPED (default: the confirmations). */
  dropAfterBlocks?: number;
  /** Blocks kept for the walk-back (default max(256, 4 × confirmations)): the deepest reorg the scanner follows. */
  keepBlocks?: number;
};

export type ScanStatus = {
  network: EvmNetwork;
  /** The cursor: the highest block scanned. */
  height: bigint | null;
  /** The node's tip at the last scan. */
  tip: bigint | null;
  lag: bigint | null;
  lastScanAt: Date | null;
  reorgs: number;
};

export type TickResult = { height: bigint; tip: bigint; reorgs: number; delivered: number };

type StoredBlock = { height: bigint; hash: Hex };

type FetchedRange = {
  blocks: Array<{ number: bigint; hash: Hex; parentHash: Hex; transactions: Array<{ hash: Hex; from: Hex; to: Hex | null; value: bigint }> }>;
  logs: TransferLog[];
};

/** Reports read and marked delivered together (see `deliver`). */
const DELIVERY_BATCH = 100;

/** The node answered something inconsistent with itself (the chain moved mid-scan): redo the range. */
class ChainMovedError extends Error {}

export class EvmScanner {
  private readonly sql: Sql;
  private readonly network: EvmNetwork;
  private readonly client: PublicClient;
  private readonly options: ScannerOptions;
  private tokenInfo: Map<string, { currency: string; decimals: number }> | undefined;

  constructor(options: ScannerOptions) {
    this.options = options;
    this.sql = options.sql;
    this.network = options.network;
    this.client = options.client;
  }

  private get dropAfter(): number {
    return this.options.dropAfterBlocks ?? this.options.confirmations;
  }

  private get keepBlocks(): number {
    return this.options.keepBlocks ?? Math.max(256, 4 * this.options.confirmations);
  }

  /**
   * One pass: catch up from the cursor to the node's tip (walking back on a
   * reorg), advance confirmations, deliver pending reports. Throws when the
   * node or the database fails; the cursor then stays where it was.
   * Concurrent passes of the same network (two processes) are serialised by
   * an advisory lock: the loser returns null.
   */
  async tick(): Promise<TickResult | null> {
    return withSessionLock(this.sql, `kassa.evm.scan.${this.network}`, () => this.pass());
  }

  /** Loop `tick` every `intervalMs` until the signal aborts; errors go to `onError` and the next tick retries. */
  async run(signal: AbortSignal, intervalMs: number, onError: (error: unknown) => void): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.tick();
      } catch (error) {
        onError(error);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
    }
  }

  async status(): Promise<ScanStatus> {
    // last_scan_at as epoch ms: the pool's type parsers may hand timestamps back as strings.
    const [state] = await this.sql<{ tip: string | null; last_scan_ms: string | null; reorg_count: string }[]>`
      select tip, (extract(epoch from last_scan_at) * 1000)::bigint as last_scan_ms, reorg_count from evm_scanner_state where network = ${this.network}`;
    const cursor = await this.cursor();
    const tip = state?.tip != null ? BigInt(state.tip) : null;
    const height = cursor?.height ?? null;
    return {
      network: this.network,
      height,
      tip,
      lag: tip !== null && height !== null ? (tip > height ? tip - height : 0n) : null,
      lastScanAt: state?.last_scan_ms != null ? new Date(Number(state.last_scan_ms)) : null,
      reorgs: Number(state?.reorg_count ?? 0),
    };
  }

  private async pass(): Promise<TickResult> {
    await this.loadTokens();
    const startReorgs = (await this.status()).reorgs;
    let tip = await this.client.getBlockNumber({ cacheTime: 0 });
    let cursor = await this.cursor();
    if (!cursor) cursor = await this.anchor(tip);
    let moved = 0;
    let delivered = 0;
    const batch = BigInt(Math.min(this.options.blocksPerBatch ?? 50, this.options.logRangeCap ?? 500));
    const rangeFrom = (from: bigint): [bigint, bigint] => [from, tip < from + batch - 1n ? tip : from + batch - 1n];
    // The next range is fetched from the node while this one is checked and written: node and
    // database work overlap (bench scenario 6). A prefetch for any other range is dropped unused.
    let next: { from: bigint; fetched: Promise<FetchedRange> } | null = null;
    for (;;) {
      // The cursor block must still be on the best chain (a reorg to a shorter or equal chain shows only here).
      const current = await this.blockOrNull(cursor.height);
      if (!current || current.hash !== cursor.hash) {
        next = null;
        cursor = await this.walkBack(cursor);
        continue;
      }
      if (cursor.height >= tip) break;
      const [from, to] = rangeFrom(cursor.height + 1n);
      const fetched = next?.from === from ? next.fetched : this.fetchRange(from, to);
      next = null;
      if (to < tip) {
        const following = this.fetchRange(...rangeFrom(to + 1n));
        following.catch(() => {}); // awaited (and its failure thrown) only if used
        next = { from: to + 1n, fetched: following };
      }
      try {
        cursor = await this.scanRange(await fetched, cursor);
      } catch (error) {
        next = null;
        if (!(error instanceof ChainMovedError) || ++moved > 5) throw error;
        tip = await this.client.getBlockNumber({ cacheTime: 0 });
        continue;
      }
      await this.advance(cursor.height);
      delivered += await this.deliver();
    }
    await this.advance(cursor.height);
    await this.sql`
      insert into evm_scanner_state (network, tip, last_scan_at) values (${this.network}, ${String(tip)}, now())
      on conflict (network) do update set tip = excluded.tip, last_scan_at = excluded.last_scan_at`;
    delivered += await this.deliver();
    const reorgs = (await this.status()).reorgs - startReorgs;
    return { height: cursor.height, tip, reorgs, delivered };
  }

  /** The block at a height, or null when the node has none there (its chain is shorter); a failing node throws. */
  private async blockOrNull(blockNumber: bigint) {
    try {
      return await this.client.getBlock({ blockNumber });
    } catch (error) {
      if (error instanceof Error && error.name === 'BlockNotFoundError') return null;
      throw error;
    }
  }

  /**
   * Deposits confirmed (so credited by Kassa) that a reorganisation took off the best chain, that are not
   * back in a block and not yet DROPPED (then Kassa reverses the credit): for an operator to watch (a
   * partial index serves it; not read on the scan path).
   */
  async creditedOffChain(): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      select count(*)::int as n from evm_deposits
       where network = ${this.network} and reorged_after_credit and block_number is null and state <> 'DROPPED'`;
    return row?.n ?? 0;
  }

  /** The watched token contracts (by lower-case address) with their currency and decimals. */
  async tokens(): Promise<ReadonlyMap<string, { currency: string; decimals: number }>> {
    await this.loadTokens();
    return this.tokenInfo!;
  }

  /** Token decimals, read once per contract (`decimals()`) and kept in `evm_tokens`. */
  private async loadTokens(): Promise<void> {
    if (this.tokenInfo) return;
    const info = new Map<string, { currency: string; decimals: number }>();
    for (const token of this.options.tokens) {
      const address = token.address.toLowerCase();
      const [stored] = await this.sql<{ decimals: number }[]>`
        select decimals from evm_tokens where network = ${this.network} and address = ${address}`;
      let decimals = stored?.decimals;
      if (decimals === undefined) {
        decimals = Number(await this.client.readContract({ address: token.address, abi: DECIMALS_ABI, functionName: 'decimals' }));
        await this.sql`
          insert into evm_tokens (network, address, currency, decimals) values (${this.network}, ${address}, ${token.currency}, ${decimals})
          on conflict do nothing`;
      }
      info.set(address, { currency: token.currency, decimals });
    }
    this.tokenInfo = info;
  }

  private async cursor(): Promise<StoredBlock | undefined> {
    const [row] = await this.sql<{ height: string; hash: Hex }[]>`
      select height, hash from evm_blocks where network = ${this.network} order by height desc limit 1`;
    return row ? { height: BigInt(row.height), hash: row.hash } : undefined;
  }

  /** First run: the block before `startHeight` (default: the tip) becomes the cursor. */
  private async anchor(tip: bigint): Promise<StoredBlock> {
    const start = this.options.startHeight ?? tip + 1n;
    const height = start > 0n ? start - 1n : 0n;
    const block = await this.client.getBlock({ blockNumber: height });
    await this.sql`
      insert into evm_blocks (network, height, hash, parent_hash) values (${this.network}, ${String(height)}, ${block.hash}, ${block.parentHash})
      on conflict do nothing`;
    return { height, hash: block.hash };
  }

  /**
   * A reorg: walk down the stored blocks until one is still on the node's best
   * chain (the fork point), forget the blocks above it, and detach the
   * deposits they held (unconfirmed again, DROPPED later if they do not come
   * back). The next range rescans from the fork point.
   */
  private async walkBack(from: StoredBlock): Promise<StoredBlock> {
    const stored = await this.sql<{ height: string; hash: Hex }[]>`
      select height, hash from evm_blocks where network = ${this.network} and height <= ${String(from.height)} order by height desc`;
    let fork: StoredBlock | undefined;
    for (const row of stored) {
      const height = BigInt(row.height);
      const canonical = await this.blockOrNull(height);
      if (canonical && canonical.hash === row.hash) {
        fork = { height, hash: row.hash };
        break;
      }
    }
    if (!fork) {
      throw new Error(`${this.network}: reorg deeper than the ${stored.length} kept blocks; the scanner stops here for an operator`);
    }
    const forkHeight = String(fork.height);
    const orphanedAt = String(from.height);
    await this.sql.begin(async (tx) => {
      await tx`delete from evm_blocks where network = ${this.network} and height > ${forkHeight}`;
      await tx`
        update evm_deposits
           set block_number = null, block_hash = null, orphaned_at = ${orphanedAt}::bigint,
               reorged_after_credit = reorged_after_credit or state = 'CONFIRMED', updated_at = now()
         where network = ${this.network} and block_number > ${forkHeight}::bigint and state <> 'DROPPED'`;
      await tx`
        insert into evm_scanner_state (network, reorg_count) values (${this.network}, 1)
        on conflict (network) do update set reorg_count = evm_scanner_state.reorg_count + 1`;
    });
    return fork;
  }

  /** The blocks `from..to` and their Transfer logs, from the node. */
  private async fetchRange(from: bigint, to: bigint): Promise<FetchedRange> {
    const [blocks, logs] = await Promise.all([this.fetchBlocks(from, to), this.fetchLogs(from, to)]);
    return { blocks, logs };
  }

  /** Check and store fetched blocks and the transfers in them, in one transaction with the cursor. */
  private async scanRange({ blocks, logs }: FetchedRange, parent: StoredBlock): Promise<StoredBlock> {
    if (blocks[0]!.parentHash !== parent.hash) throw new ChainMovedError('first block does not follow the cursor');
    if (!isContiguous(blocks)) throw new ChainMovedError('blocks of one range do not chain');
    const hashAt = new Map(blocks.map((b) => [b.number, b.hash]));
    if (logs.some((log) => hashAt.get(log.blockNumber) !== log.blockHash)) throw new ChainMovedError('logs from another chain');

    const watched = this.options.watched;
    const own = this.options.ownSenders;
    const native = blocks.flatMap((block) => nativeTransfers(block, watched, NATIVE_CURRENCY[this.network], own));
    const transfers = [...(await this.successful(native)), ...tokenTransfers(logs, this.tokenInfo!, watched, own)];
    const last = blocks[blocks.length - 1]!;

    // Three statements for the whole range (blocks, deposits with their reports, pruning) instead of
    // one a block and two a transfer: at 50 blocks and 250 deposits a range, the round trips were
    // most of the scan's time (bench scenario 6).
    await this.sql.begin(async (tx) => {
      await tx`
        insert into evm_blocks (network, height, hash, parent_hash)
        select ${this.network}, u.height::bigint, u.hash, u.parent_hash
          from unnest(${blocks.map((b) => String(b.number))}::text[], ${blocks.map((b) => b.hash)}::text[], ${blocks.map((b) => b.parentHash)}::text[])
            as u(height, hash, parent_hash)
        on conflict (network, height) do update set hash = excluded.hash, parent_hash = excluded.parent_hash`;
      await this.record(tx, transfers, last.number);
      await tx`delete from evm_blocks where network = ${this.network} and height < ${String(last.number - BigInt(this.keepBlocks))}::bigint`;
    });
    return { height: last.number, hash: last.hash };
  }

  private async fetchBlocks(from: bigint, to: bigint) {
    const heights: bigint[] = [];
    for (let h = from; h <= to; h++) heights.push(h);
    const concurrency = this.options.blockConcurrency ?? 4;
    const blocks: FetchedRange['blocks'] = [];
    for (let i = 0; i < heights.length; i += concurrency) {
      // Plain JSON-RPC, read field by field: viem's getBlock formats every field of every
      // transaction (a few dozen conversions each) of which the scanner reads four.
      const chunk = await Promise.all(
        heights.slice(i, i + concurrency).map(async (blockNumber) => {
          const block = await this.client.request({ method: 'eth_getBlockByNumber', params: [`0x${blockNumber.toString(16)}`, true] }) as unknown as RpcBlock | null;
          // A block above the tip (the chain shrank since getBlockNumber) is a moved chain.
          if (!block) throw new ChainMovedError(`block ${blockNumber} not found`);
          return block;
        }),
      );
      for (const b of chunk) {
        blocks.push({
          number: BigInt(b.number),
          hash: b.hash,
          parentHash: b.parentHash,
          transactions: b.transactions.map((tx) => ({ hash: tx.hash, from: tx.from, to: tx.to, value: BigInt(tx.value) })),
        });
      }
    }
    return blocks;
  }

  /** Transfer logs of the configured contracts, in ranges of at most `logRangeCap` blocks; filtered locally against the watched set. */
  private async fetchLogs(from: bigint, to: bigint): Promise<TransferLog[]> {
    const addresses = this.options.tokens.map((t) => t.address);
    if (addresses.length === 0) return [];
    const found: TransferLog[] = [];
    for (const [fromBlock, toBlock] of blockRanges(from, to, this.options.logRangeCap ?? 500)) {
      found.push(...(await this.getLogsSplitting(addresses, fromBlock, toBlock)));
    }
    return found;
  }

  /**
   * `eth_getLogs` over [from, to]; when the node refuses the range with a
   * JSON-RPC error (providers cap ranges and result counts below any cap we
   * could configure for all of them), halve it and try the halves. A failing
   * or silent node (HTTP error, timeout) is not split: it is an outage.
   */
  private async getLogsSplitting(addresses: Address[], fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]> {
    let logs: RpcLog[];
    try {
      // Plain eth_getLogs, decoded by `decodeTransferLog` (see there why not viem's decoder).
      logs = (await this.client.request({
        method: 'eth_getLogs',
        params: [{ address: addresses, topics: [TRANSFER_TOPIC], fromBlock: `0x${fromBlock.toString(16)}`, toBlock: `0x${toBlock.toString(16)}` }],
      })) as unknown as RpcLog[];
    } catch (error) {
      const refused = error instanceof BaseError && error.walk((e) => e instanceof RpcError || e instanceof RpcRequestError) !== null;
      if (!refused || fromBlock >= toBlock) throw error;
      const middle = fromBlock + (toBlock - fromBlock) / 2n;
      return [...(await this.getLogsSplitting(addresses, fromBlock, middle)), ...(await this.getLogsSplitting(addresses, middle + 1n, toBlock))];
    }
    const decoded: TransferLog[] = [];
    for (const log of logs) {
      const transfer = decodeTransferLog(log, TRANSFER_TOPIC);
      if (transfer) decoded.push(transfer);
    }
    return decoded;
  }

  /** Native candidates whose transaction did not revert (a reverted call moves no value). */
  private async successful(candidates: Transfer[]): Promise<Transfer[]> {
    const kept: Transfer[] = [];
    for (const transfer of candidates) {
      const receipt = await this.client.getTransactionReceipt({ hash: transfer.txHash });
      if (receipt.blockHash !== transfer.blockHash) throw new ChainMovedError('receipt from another block');
      // The fee the sender paid, exactly: gas used at the price the block charged.
      if (receipt.status === 'success') kept.push({ ...transfer, onChainFee: formatUnits(receipt.gasUsed * receipt.effectiveGasPrice, 18) });
    }
    return kept;
  }

  /**
   * Store a range's transfers, in one statement. New → SEEN (reported).
   * Already known and detached by a reorg → attached to its new block,
   * silently (it was reported SEEN); a DROPPED one that comes back is SEEN
   * again. `previous` is read from the statement's snapshot, before its insert.
   */
  private async record(tx: postgres.TransactionSql, found: Transfer[], height: bigint): Promise<void> {
    // One row per (tx, output): a second one with the same key would only have re-attached the first.
    const seen = new Set<string>();
    const transfers = found.filter((t) => {
      const key = `${t.txHash}:${t.outputIndex}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
    if (transfers.length === 0) return;
    const column = <T,>(pick: (t: Transfer) => T) => transfers.map(pick);
    await tx`
      with input as (
        select * from unnest(
          ${column((t) => t.txHash)}::text[], ${column((t) => t.outputIndex)}::int[], ${column((t) => t.fromAddress)}::text[],
          ${column((t) => t.toAddress)}::text[], ${column((t) => t.currency)}::text[], ${column((t) => t.amount)}::text[],
          ${column((t) => t.amountBase.toString())}::text[], ${column((t) => String(t.blockNumber))}::text[], ${column((t) => t.blockHash)}::text[],
          ${column((t) => confirmationsAt(height, t.blockNumber))}::int[], ${column((t) => t.onChainFee)}::text[]
        ) with ordinality as u(tx_hash, output_index, from_address, to_address, currency, amount, amount_base, block_number, block_hash, confirmations, on_chain_fee, ord)
      ), previous as (
        select d.tx_hash, d.output_index, d.state from evm_deposits d join input i using (tx_hash, output_index) where d.network = ${this.network}
      ), stored as (
        insert into evm_deposits (network, tx_hash, output_index, from_address, to_address, currency, amount, amount_base, block_number, block_hash, state, on_chain_fee)
        select ${this.network}, tx_hash, output_index, from_address, to_address, currency, amount, amount_base::numeric, block_number::bigint, block_hash, 'SEEN', on_chain_fee::numeric
          from input order by ord
        on conflict (network, tx_hash, output_index) do update
          set block_number = excluded.block_number, block_hash = excluded.block_hash, orphaned_at = null,
              state = case when evm_deposits.state = 'DROPPED' then 'SEEN' else evm_deposits.state end,
              -- back after it was dropped (its credit then reversed): not a credit off the chain any more
              reorged_after_credit = evm_deposits.reorged_after_credit and evm_deposits.state <> 'DROPPED',
              updated_at = now()
        returning tx_hash, output_index, drops
      )
      insert into evm_deposit_events (network, tx_hash, output_index, state, confirmations, round)
      select ${this.network}, i.tx_hash, i.output_index, 'SEEN', i.confirmations, s.drops
        from input i join stored s using (tx_hash, output_index) left join previous p using (tx_hash, output_index)
       where p.state is null or p.state = 'DROPPED'
       order by i.ord`;
  }

  /** With the cursor at `height`: SEEN deposits deep enough become CONFIRMED, detached ones past their grace DROPPED. */
  private async advance(height: bigint): Promise<void> {
    const open = await this.sql<{ tx_hash: Hex; output_index: number; state: 'SEEN' | 'CONFIRMED'; block_number: string | null; orphaned_at: string | null }[]>`
      select tx_hash, output_index, state, block_number, orphaned_at from evm_deposits
       where network = ${this.network} and (state = 'SEEN' or (state = 'CONFIRMED' and block_number is null))
       order by block_number nulls first, first_seen_at, output_index`;
    const changes: { txHash: Hex; outputIndex: number; from: string; to: string; confirmations: number }[] = [];
    for (const d of open) {
      const facts = {
        state: d.state,
        blockNumber: d.block_number === null ? null : BigInt(d.block_number),
        orphanedAt: d.orphaned_at === null ? null : BigInt(d.orphaned_at),
      };
      const next = nextState(facts, height, this.options.confirmations, this.dropAfter);
      if (!next) continue;
      // Off the best chain for the grace, but still known to the node (back in its mempool after
      // the reorganisation, or in a block the scan has not reached): not dropped while it may be
      // mined. Dropping it only to see it mined again would reverse a credit and then grant it again.
      if (next === 'DROPPED' && (await this.mayStillBeMined(d.tx_hash, height))) continue;
      const confirmations = facts.blockNumber === null ? 0 : confirmationsAt(height, facts.blockNumber);
      changes.push({ txHash: d.tx_hash, outputIndex: d.output_index, from: d.state, to: next, confirmations });
    }
    if (changes.length === 0) return;
    // Every change and its report in one statement (atomic by itself). The state guard makes a
    // concurrent or repeated pass a no-op for that deposit; the unique index makes CONFIRMED once a
    // round (`drops`: a transfer DROPPED and then mined again is confirmed, and reported, again).
    const column = <T,>(pick: (c: (typeof changes)[number]) => T) => changes.map(pick);
    await this.sql`
      with input as (
        select * from unnest(
          ${column((c) => c.txHash)}::text[], ${column((c) => c.outputIndex)}::int[], ${column((c) => c.from)}::text[],
          ${column((c) => c.to)}::text[], ${column((c) => c.confirmations)}::int[]
        ) with ordinality as u(tx_hash, output_index, from_state, next_state, confirmations, ord)
      ), changed as (
        update evm_deposits d set state = i.next_state, drops = d.drops + (i.next_state = 'DROPPED')::int, updated_at = now()
          from input i
         where d.network = ${this.network} and d.tx_hash = i.tx_hash and d.output_index = i.output_index and d.state = i.from_state
        returning d.tx_hash, d.output_index, d.drops
      )
      insert into evm_deposit_events (network, tx_hash, output_index, state, confirmations, round)
      select ${this.network}, i.tx_hash, i.output_index, i.next_state, i.confirmations, c.drops
        from input i join changed c using (tx_hash, output_index)
       order by i.ord
      on conflict do nothing`;
  }

  /**
   * Whether a transfer off the best chain past its grace may still come back: its transaction is
   * pending in the node's mempool, or mined in a best-chain block above the scanned height (the
   * next scan attaches it). Mined at or below it, the scan did not find this transfer there (a
   * token transfer re-mined lands at another log index, i.e. another transfer; a reverted one is
   * none): it is gone. A node that cannot answer leaves it for the next pass, never stalling the
   * other changes or the delivery.
   */
  private async mayStillBeMined(txHash: Hex, height: bigint): Promise<boolean> {
    try {
      const tx = await this.client.request({ method: 'eth_getTransactionByHash', params: [txHash] });
      if (tx === null) return false;
      if (tx.blockHash === null || tx.blockNumber === null) return true;
      const at = BigInt(tx.blockNumber);
      return at > height && (await this.blockOrNull(at))?.hash === tx.blockHash;
    } catch {
      return true;
    }
  }

  private async markDelivered(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.sql`update evm_deposit_events set delivered_at = now() where id = any(${ids}::bigint[])`;
  }

  /**
   * Send undelivered reports to the sink in order; a sink failure stops here and the next pass
   * resumes. The reports delivered are marked in one statement per batch (also when the sink
   * fails), not one commit each: a commit per report (an fsync) was two thirds of a scan's time
   * (bench scenario 6). A crash between a delivery and its mark re-delivers at most that batch,
   * which the sink ignores (it is idempotent per network, txHash, outputIndex and state).
   */
  private async deliver(): Promise<number> {
    let delivered = 0;
    for (;;) {
      const events = await this.sql<
        { id: string; tx_hash: Hex; output_index: number; state: DepositReport['state']; confirmations: number; from_address: Hex; to_address: Hex; currency: string; amount: string; on_chain_fee: string | null }[]
      >`
        with e as materialized (
          -- The batch first (the partial index of undelivered reports), then its deposits by primary
          -- key: joined before the limit, the plan read every report and deposit, ~50 ms a batch
          -- once the tables held a few thousand rows (bench scenario 6).
          select id, network, tx_hash, output_index, state, confirmations from evm_deposit_events
           where network = ${this.network} and delivered_at is null
           order by id limit ${DELIVERY_BATCH}
        )
        select e.id, e.tx_hash, e.output_index, e.state, e.confirmations, d.from_address, d.to_address, d.currency, d.amount, d.on_chain_fee::text
          from e join evm_deposits d using (network, tx_hash, output_index)
         order by e.id`;
      if (events.length === 0) return delivered;
      const done: string[] = [];
      try {
        for (const e of events) {
          await this.options.sink({
            network: this.network,
            txHash: e.tx_hash,
            outputIndex: e.output_index,
            fromAddress: e.from_address,
            toAddress: e.to_address,
            currency: e.currency,
            amount: e.amount,
            state: e.state,
            confirmations: e.confirmations,
            ...(e.on_chain_fee === null ? {} : { onChainFee: e.on_chain_fee }),
          });
          done.push(e.id);
          delivered++;
          // A DROPPED report is marked before any later one is sent: delivered again after a crash
          // behind the SEEN or CONFIRMED of the transfer mined again, it would take a credit back
          // that is there. Alone, or at the end of its batch, it is a plain replay.
          if (e.state === 'DROPPED') await this.markDelivered(done.splice(0));
        }
      } finally {
        await this.markDelivered(done);
      }
    }
  }
}
