/**
 * The block scanner of one UTXO network: walks the node's best chain from a `(height, hash)`
 * cursor kept in PostgreSQL, walks back on a parent mismatch (reorg), reads the mempool, and
 * reports outputs paying deposit addresses to the sink: SEEN, CONFIRMED at the configured depth,
 * or DROPPED when double-spent or reorganised away. Also tracks every output Kassa's addresses
 * own (deposits and change): the wallet spends from that set.
 *
 * No node call happens inside a database transaction: a pass first reads from the node, then
 * writes each block's effects in one transaction together with the cursor.
 */
import { AccountKeys, addressForScript, CHANGE, DEPOSIT, type Branch } from './keys.js';
import { fromBaseUnits, toBaseUnits } from './amounts.js';
import { RpcError, RPC_CODES, type RpcClient } from './rpc.js';
import { withSessionLock } from '../session-lock.js';
import {
  addressesToDerive,
  confirmationsAt,
  creditedNextState,
  forkPoint,
  needsReport,
  nextState,
  transactionFee,
  type StoredBlock,
} from './scanner.rules.js';
import * as store from './store.js';
import type { ResolvedParams } from './params.js';
import type { DepositSink } from './types.js';

/** A transaction as `getrawtransaction <txid> true` / `getblock <hash> 2` print it (amounts exact strings). */
export type NodeTx = {
  txid: string;
  vin: { txid?: string; vout?: number; coinbase?: string }[];
  // Litecoin's MWEB outputs carry no scriptPubKey: optional, and never matched.
  vout: { value: string; n: number; scriptPubKey?: { hex: string; address?: string; addresses?: string[] } }[];
  blockhash?: string;
};
type NodeBlock = { hash: string; height: number; previousblockhash?: string; tx: NodeTx[] };

export type ScannerOptions = {
  rpc: RpcClient;
  sql: store.Sql;
  keys: AccountKeys;
  params: ResolvedParams;
  /** Depth at which a deposit is credited (tip − height + 1 ≥ confirmations). */
  confirmations: number;
  sink: DepositSink;
  /** First height to scan when no cursor is stored; default: the node's tip at the first pass. */
  startHeight?: number;
  /** Unused addresses kept derived and watched after the highest used one, per branch. Default 20. */
  gap?: number;
  /**
   * The highest deposit index Kassa has handed out (e.g. from its payments table), so that
   * every assigned address is watched even when another process assigned it. Optional:
   * `watchDeposit` does the same per address.
   */
  highestAssignedIndex?: () => Promise<number>;
};

const MEMPOOL_CONCURRENCY = 8;

export type ScanSummary = { tip: number; blocks: number; reorgs: number; reports: number };

export class UtxoScanner {
  private readonly network: string;
  private readonly gap: number;
  /** Mempool transactions already inspected by this process (a restart inspects them again: harmless). */
  private readonly mempoolSeen = new Set<string>();
  /** The node's tip at this process's last pass (a pass that finds another worker scanning reports it). */
  private lastTip = -1;

  constructor(private readonly o: ScannerOptions) {
    this.network = o.params.network;
    this.gap = o.gap ?? 20;
  }

  /** Derive and watch enough addresses that `gap` unused ones follow the highest used one on each branch. */
  async ensureAddresses(minimum: { branch: Branch; index: number }[] = []): Promise<void> {
    if (this.o.highestAssignedIndex) minimum = [...minimum, { branch: DEPOSIT, index: await this.o.highestAssignedIndex() }];
    const stats = await store.addressStats(this.o.sql, this.network);
    const rows: store.WatchedAddress[] = [];
    for (const branch of [DEPOSIT, CHANGE] as const) {
      const { derived, highestUsed } = stats.get(branch)!;
      const wanted = Math.max(highestUsed, ...minimum.filter((m) => m.branch === branch).map((m) => m.index));
      const more = addressesToDerive(derived, wanted, this.gap);
      for (let i = derived; i < derived + more; i++) {
        const a = this.o.keys.derive(branch, i);
        rows.push({ branch, idx: i, address: a.address, script: a.script });
      }
    }
    await store.insertAddresses(this.o.sql, this.network, rows);
  }

  /** Watch deposit address `index` (and the gap after it) from now on; returns the address. */
  async watchDeposit(index: number): Promise<string> {
    await this.ensureAddresses([{ branch: DEPOSIT, index }]);
    return this.o.keys.depositAddress(index).address;
  }

  /**
   * One pass. Concurrent passes of the same network (several workers) are serialised by an
   * advisory lock: a pass that cannot take it returns at once.
   */
  async scan(): Promise<ScanSummary> {
    return (await withSessionLock(this.o.sql, `kassa-utxo-scan:${this.network}`, () => this.pass())) ?? { tip: this.lastTip, blocks: 0, reorgs: 0, reports: 0 };
  }

  private async pass(): Promise<ScanSummary> {
    await this.ensureAddresses();
    const watched = new Map((await store.watchedAddresses(this.o.sql, this.network)).map((w) => [w.script, w]));
    let tip = await this.o.rpc.call<number>('getblockcount');
    let cursor = await store.readCursor(this.o.sql, this.network);
    if (!cursor) {
      const start = Math.min(this.o.startHeight ?? tip, tip);
      const height = Math.max(start - 1, 0);
      cursor = { height, hash: await this.o.rpc.call<string>('getblockhash', [height]) };
      await store.setCursor(this.o.sql, this.network, cursor);
    }

    let blocks = 0;
    let reorgs = 0;
    for (;;) {
      const walked = await this.walkBack(cursor);
      if (walked.height !== cursor.height || walked.hash !== cursor.hash) reorgs++;
      cursor = walked;
      let restart = false;
      while (cursor.height < tip) {
        const hash: string | null = await this.o.rpc.call<string>('getblockhash', [cursor.height + 1]).catch((e: unknown) => {
          if (e instanceof RpcError) return null; // the chain got shorter under us
          throw e;
        });
        if (!hash) {
          // Read the tip again: confirmations counted from the one read before would credit too early.
          restart = true;
          break;
        }
        const block: NodeBlock = await this.o.rpc.call<NodeBlock>('getblock', [hash, 2]);
        if (block.previousblockhash !== cursor.hash) {
          restart = true; // the chain changed between the walk-back and now
          break;
        }
        if ((await this.applyBlock(block, watched)) > 0) await this.extendWatch(watched);
        cursor = { height: block.height, hash: block.hash };
        blocks++;
      }
      if (!restart) break;
      tip = await this.o.rpc.call<number>('getblockcount');
    }
    // Counted now: a later step of the pass that fails must not lose the reorganisations walked back.
    if (reorgs > 0) await store.addReorgs(this.o.sql, this.network, reorgs);

    const mempool = new Set(await this.o.rpc.call<string[]>('getrawmempool'));
    await this.readMempool(mempool, watched);
    const reports = await this.settle(tip, mempool);
    // Addresses that got used in this pass move the gap window forward.
    await this.ensureAddresses();
    // In the database, not this process's memory: /metrics of every process (web, worker) reports it.
    await store.recordPass(this.o.sql, this.network);
    this.lastTip = tip;
    return { tip, blocks, reorgs, reports };
  }

  /** From the cursor down to the highest stored block the node still has at its height. */
  private async walkBack(cursor: StoredBlock): Promise<StoredBlock> {
    const nodeHash = (h: number) =>
      this.o.rpc.call<string>('getblockhash', [h]).catch((e) => {
        if (e instanceof RpcError) return undefined; // above the node's tip
        throw e;
      });
    if ((await nodeHash(cursor.height)) === cursor.hash) return cursor;
    let below = cursor.height - 1;
    for (;;) {
      const batch = await store.storedBlocks(this.o.sql, this.network, below, 20);
      const nodeHashes = new Map(await Promise.all(batch.map(async (b) => [b.height, await nodeHash(b.height)] as const)));
      const fork = forkPoint(batch, nodeHashes);
      if (fork) {
        await this.o.sql.begin(async (tx) => {
          await store.disconnectAbove(tx, this.network, fork.height);
          await store.setCursor(tx, this.network, fork);
        });
        return fork;
      }
      if (batch.length < 20) break;
      below = batch[batch.length - 1]!.height - 1;
    }
    // Deeper than the kept history: resume from the node's block below the oldest kept one.
    const oldest = (await store.storedBlocks(this.o.sql, this.network, cursor.height, store.KEPT_BLOCKS)).at(-1);
    const height = Math.max((oldest?.height ?? cursor.height) - 1, 0);
    const fallback = { height, hash: (await nodeHash(height))! };
    await this.o.sql.begin(async (tx) => {
      await store.disconnectAbove(tx, this.network, height);
      await store.setCursor(tx, this.network, fallback);
    });
    return fallback;
  }

  /** Outputs of `txs` paying watched scripts, with sender and fee read from the node (-txindex). */
  private async matchOutputs(txs: NodeTx[], watched: Map<string, store.WatchedAddress>): Promise<store.NewOutput[]> {
    const hits = txs.flatMap((tx) => tx.vout.filter((v) => v.scriptPubKey !== undefined && watched.has(v.scriptPubKey.hex)).map((v) => ({ tx, v })));
    if (hits.length === 0) return [];
    const known = await store.knownOutputs(this.o.sql, this.network, [...new Set(hits.map((h) => h.tx.txid))]);
    const prevCache = new Map<string, Promise<NodeTx>>();
    const prevTx = (txid: string) => {
      if (!prevCache.has(txid)) prevCache.set(txid, this.o.rpc.call<NodeTx>('getrawtransaction', [txid, true]));
      return prevCache.get(txid)!;
    };
    const senders = new Map<string, { fromAddress: string; fee: bigint | null }>();
    const result: store.NewOutput[] = [];
    for (const { tx, v } of hits) {
      const w = watched.get(v.scriptPubKey!.hex)!;
      let info = senders.get(tx.txid);
      if (!info && !known.has(`${tx.txid}:${v.n}`)) {
        const inputs = await Promise.all(
          tx.vin.map(async (vin) => {
            if (vin.coinbase !== undefined || vin.txid === undefined) return null;
            return (await prevTx(vin.txid)).vout.find((o) => o.n === vin.vout) ?? null;
          }),
        );
        const spk = inputs[0]?.scriptPubKey;
        const fromAddress = spk ? (spk.address ?? spk.addresses?.[0] ?? addressForScript(Buffer.from(spk.hex, 'hex'), this.o.params) ?? '') : '';
        const fee = transactionFee(
          inputs.map((i) => (i ? toBaseUnits(i.value) : null)),
          tx.vout.map((o) => toBaseUnits(o.value)),
        );
        info = { fromAddress, fee };
        senders.set(tx.txid, info);
      }
      result.push({
        txid: tx.txid,
        vout: v.n,
        branch: w.branch,
        idx: w.idx,
        address: w.address,
        script: w.script,
        amount: toBaseUnits(v.value),
        fromAddress: info?.fromAddress ?? '',
        fee: info?.fee ?? null,
      });
    }
    return result;
  }

  private spendsOf(txs: NodeTx[]) {
    return txs.flatMap((tx) =>
      tx.vin.filter((v) => v.txid !== undefined).map((v) => ({ txid: v.txid!, vout: v.vout!, spender: tx.txid })),
    );
  }

  /**
   * An address got used: derive the gap after it at once and watch it for the rest of this pass
   * (a later block of the same pass may pay the next address).
   */
  private async extendWatch(watched: Map<string, store.WatchedAddress>): Promise<void> {
    await this.ensureAddresses();
    for (const w of await store.watchedAddresses(this.o.sql, this.network)) watched.set(w.script, w);
  }

  /** Returns how many outputs paid watched addresses. */
  private async applyBlock(block: NodeBlock, watched: Map<string, store.WatchedAddress>): Promise<number> {
    const outputs = await this.matchOutputs(block.tx, watched);
    const spends = this.spendsOf(block.tx);
    const at = { height: block.height, hash: block.hash };
    await this.o.sql.begin(async (tx) => {
      await store.upsertOutputs(tx, this.network, outputs, at);
      await store.markSpent(tx, this.network, spends);
      await store.setCursor(tx, this.network, at);
    });
    return outputs.length;
  }

  private async readMempool(mempool: Set<string>, watched: Map<string, store.WatchedAddress>): Promise<void> {
    const fresh = [...mempool].filter((t) => !this.mempoolSeen.has(t));
    const txs: NodeTx[] = [];
    // A few requests at a time: the first pass on a busy node reads the whole mempool.
    for (let i = 0; i < fresh.length; i += MEMPOOL_CONCURRENCY) {
      const chunk = await Promise.all(
        fresh.slice(i, i + MEMPOOL_CONCURRENCY).map((txid) =>
          this.o.rpc.call<NodeTx>('getrawtransaction', [txid, true]).catch((e) => {
            if (e instanceof RpcError) return null; // left the mempool meanwhile
            throw e;
          }),
        ),
      );
      for (const tx of chunk) if (tx) txs.push(tx);
    }
    let outputs = await this.matchOutputs(txs, watched);
    if (outputs.length > 0) {
      // the gap moved: match again, as the same batch may pay the next addresses
      await this.extendWatch(watched);
      outputs = await this.matchOutputs(txs, watched);
    }
    const spends = this.spendsOf(txs);
    await this.o.sql.begin(async (tx) => {
      await store.upsertOutputs(tx, this.network, outputs, null);
      await store.markSpent(tx, this.network, spends);
    });
    for (const t of fresh) this.mempoolSeen.add(t);
    for (const t of this.mempoolSeen) if (!mempool.has(t)) this.mempoolSeen.delete(t);
  }

  /** Is the transaction in a block of the node's best chain (one the walk has not reached yet)? */
  private async inBestChainBlock(txid: string): Promise<boolean> {
    try {
      const tx = await this.o.rpc.call<NodeTx>('getrawtransaction', [txid, true]);
      // Litecoin/Bitcoin Core keep returning a transaction whose block was reorganised away (txindex):
      // ask whether that block is on the best chain (confirmations −1 when it is not).
      if (!tx.blockhash) return false;
      const header = await this.o.rpc.call<{ confirmations: number }>('getblockheader', [tx.blockhash]);
      return header.confirmations > 0;
    } catch (e) {
      if (e instanceof RpcError && e.code === RPC_CODES.INVALID_ADDRESS_OR_KEY) return false;
      throw e;
    }
  }

  /** Move open outputs to their next state and tell the sink what changed. */
  private async settle(tip: number, mempool: Set<string>): Promise<number> {
    let reports = 0;
    for (const row of await store.openOutputs(this.o.sql, this.network)) {
      let state = row.state;
      const offChain = row.blockHeight === null && (state === 'SEEN' || state === 'CONFIRMED');
      const inMempool = mempool.has(row.txid);
      const where = { blockHeight: row.blockHeight, inMempool, inBestChainBlock: offChain && !inMempool ? await this.inBestChainBlock(row.txid) : false };
      if (state === 'SEEN') {
        state = nextState({ state, ...where }, tip, this.o.confirmations);
      } else if (offChain) {
        const next = creditedNextState({ ...where, goneSince: row.goneSinceTip }, tip, this.o.confirmations);
        if (next.goneSince !== row.goneSinceTip) await store.setGoneSince(this.o.sql, this.network, row.txid, row.vout, next.goneSince);
        state = next.state;
      }
      if (state !== row.state) await store.setState(this.o.sql, this.network, row.txid, row.vout, row.state, state);
      const confirmations = state === 'DROPPED' ? 0 : confirmationsAt(tip, row.blockHeight);
      if (!needsReport({ state, confirmations }, { state: row.reportedState, confirmations: row.reportedConfirmations })) continue;
      if (row.branch === DEPOSIT) {
        // At-least-once: the sink is idempotent per (network, txHash, outputIndex); a crash
        // before markReported repeats the report, never loses it.
        await this.o.sink({
          network: this.o.params.network,
          txHash: row.txid,
          outputIndex: row.vout,
          fromAddress: row.fromAddress,
          toAddress: row.address,
          currency: this.o.params.currency,
          amount: fromBaseUnits(row.amount),
          state,
          confirmations,
          onChainFee: fromBaseUnits(row.fee ?? 0n),
        });
        reports++;
      }
      await store.markReported(this.o.sql, this.network, row.txid, row.vout, state, confirmations);
    }
    return reports;
  }
}
