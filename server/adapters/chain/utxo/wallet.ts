/**
 * Payouts of one UTXO network from the outputs the scanner tracks: coin selection, change to a
 * fresh `<xpub>/1/i`, fee rate from `estimatesmartfee` (floor, fallback), signing by the signer
 * role. The signed raw transaction is STORED (with its inputs marked spent) in one database
 * transaction before any broadcast; a retry of the same payout id only ever rebroadcasts that
 * stored transaction, so a crash at any point neither loses nor doubles a payout.
 */
import { hex } from '@scure/base';
import { AccountKeys, CHANGE, scriptForAddress } from './keys.js';
import { toBaseUnits } from './amounts.js';
import { RpcError, RPC_CODES, type RpcClient } from './rpc.js';
import * as store from './store.js';
import { withSessionLock } from '../session-lock.js';
import { chooseFeeRate, feeFor, isSpendable, kvbToSatPerVb, outputSize, payoutVsize, replacementFee, satPerVbToKvb, selectCoins, SIZES, type FeeEstimate } from './wallet.rules.js';
import type { ResolvedParams } from './params.js';
import type { PayoutSigner, UnsignedInput } from './signer.js';
import type { PayoutRequest, PayoutResult, PayoutSettlement } from './types.js';

export type WalletOptions = {
  rpc: RpcClient;
  sql: store.Sql;
  keys: AccountKeys;
  params: ResolvedParams;
  signer: PayoutSigner;
  /** `KASSA_<NET>_FALLBACK_FEE_RATE`, sat/vB, used when the node cannot estimate. Default "10". */
  fallbackFeeRate?: string;
  /** Never pay less than this, sat/vB (the default relay minimum). Default "1". */
  minFeeRate?: string;
  /** Confirmation target for `estimatesmartfee`. Default 6. */
  feeTarget?: number;
  /** Change below this is left to the fee. Default 546 sat. */
  dust?: bigint;
};

export class PayoutConflictError extends Error {
  override name = 'PayoutConflictError';
}

/** The payout is signed and stored, but the node refused or did not answer the broadcast: retry `payout` with the same id. */
export class PayoutBroadcastError extends Error {
  override name = 'PayoutBroadcastError';
  constructor(
    readonly txHash: string,
    override readonly cause: unknown,
  ) {
    super(`payout ${txHash} stored but not broadcast: ${(cause as Error).message}`);
  }
}

/** A tracked output as the signer spends it. */
const unsignedInput = (o: store.OutputRow): UnsignedInput => ({ txid: o.txid, vout: o.vout, amount: o.amount, script: o.script, branch: o.branch, idx: o.idx });

/** The smallest output relays accept (Core's dust limit for a P2PKH output at 3 sat/vB), unless configured. */
const DEFAULT_DUST = 546n;

export class UtxoWallet {
  private readonly network: string;
  private get dust(): bigint {
    return this.o.dust ?? DEFAULT_DUST;
  }
  constructor(private readonly o: WalletOptions) {
    this.network = o.params.network;
  }

  /**
   * The fee rate to pay now, in sat/kvB, and where it came from. The floor is the higher of the
   * configured minimum and what the node's mempool currently admits (`mempoolminfee`).
   */
  async feeRate(): Promise<{ satPerKvb: bigint; source: 'estimate' | 'fallback' }> {
    const estimate = await this.o.rpc.call<FeeEstimate>('estimatesmartfee', [this.o.feeTarget ?? 6]).catch((e) => {
      if (e instanceof RpcError) return null;
      throw e;
    });
    const mempool = await this.o.rpc.call<{ mempoolminfee?: string }>('getmempoolinfo');
    const configured = satPerVbToKvb(this.o.minFeeRate ?? '1');
    const admitted = mempool.mempoolminfee ? toBaseUnits(mempool.mempoolminfee) : 0n;
    return chooseFeeRate(estimate, satPerVbToKvb(this.o.fallbackFeeRate ?? '10'), admitted > configured ? admitted : configured);
  }

  /** Pay `amount` to `toAddress` once per `id`. */
  async payout(request: PayoutRequest): Promise<PayoutResult> {
    if (request.network !== this.o.params.network || request.currency !== this.o.params.currency) {
      throw new PayoutConflictError(`this wallet pays ${this.o.params.currency} on ${this.o.params.network}`);
    }
    const amount = toBaseUnits(request.amount);
    const payeeScript = scriptForAddress(request.toAddress, this.o.params); // throws on another chain's address
    let payout = await store.findPayout(this.o.sql, this.network, request.id);
    if (!payout) {
      // Node calls first, outside the database transaction.
      const rate = await this.feeRate();
      payout = await this.o.sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext(${'kassa-utxo-wallet:' + this.network}))`;
        const existing = await store.findPayout(tx, this.network, request.id);
        if (existing) return existing;
        const spendable = (await store.unspentOutputs(tx, this.network)).filter(isSpendable);
        const byKey = new Map(spendable.map((o) => [`${o.txid}:${o.vout}`, o]));
        const sizes = SIZES[this.o.params.addressType];
        const selection = selectCoins({
          coins: spendable.map((o) => ({ key: `${o.txid}:${o.vout}`, amount: o.amount })),
          amount,
          satPerKvb: rate.satPerKvb,
          sizes,
          payeeOutputSize: outputSize(payeeScript.length),
          dust: this.dust,
        });
        const inputs = selection.inputs.map((c) => unsignedInput(byKey.get(c.key)!));
        const outputs = [{ script: payeeScript, amount }];
        let changeIndex: number | null = null;
        if (selection.change > 0n) {
          changeIndex = await store.nextChangeIndex(tx, this.network);
          const change = this.o.keys.derive(CHANGE, changeIndex);
          // Watch the change address (and every index below it) before the transaction exists.
          const known = (await store.addressStats(tx, this.network)).get(CHANGE)!.derived;
          const missing = [];
          for (let i = known; i <= changeIndex; i++) {
            const a = this.o.keys.derive(CHANGE, i);
            missing.push({ branch: CHANGE, idx: i, address: a.address, script: a.script });
          }
          await store.insertAddresses(tx, this.network, missing);
          outputs.push({ script: hex.decode(change.script), amount: selection.change });
        }
        const signed = await this.o.signer.sign({ network: this.o.params.network, inputs, outputs });
        const row = {
          id: request.id,
          toAddress: request.toAddress,
          amount,
          txid: signed.txid,
          rawTx: signed.hex,
          fee: selection.fee,
          feeRate: kvbToSatPerVb(rate.satPerKvb),
          changeIndex,
          inputs: inputs.map((i) => ({ txid: i.txid, vout: i.vout })),
        };
        await store.insertPayout(tx, this.network, row);
        return { ...row, broadcastAt: null };
      });
    } else if (payout.toAddress !== request.toAddress || payout.amount !== amount) {
      throw new PayoutConflictError(`payout ${request.id} exists with another destination or amount`);
    }
    await this.broadcast(payout);
    return { txHash: payout.txid };
  }

  /** Send the stored raw transaction (again). "Already known / in chain" counts as sent. */
  private async broadcast(payout: store.PayoutRow): Promise<void> {
    try {
      await this.o.rpc.call<string>('sendrawtransaction', [payout.rawTx]);
    } catch (error) {
      const already =
        error instanceof RpcError &&
        (error.code === RPC_CODES.VERIFY_ALREADY_IN_CHAIN ||
          /already (in|known)|txn-already/i.test(error.message) ||
          // inputs "missing or spent": possibly by this very transaction, mined and its outputs spent since
          (error.code === RPC_CODES.VERIFY_ERROR && (await this.minedOnBestChain(payout.txid))));
      if (!already) {
        await store.recordBroadcast(this.o.sql, this.network, payout.id, (error as Error).message);
        throw new PayoutBroadcastError(payout.txid, error);
      }
    }
    await store.recordBroadcast(this.o.sql, this.network, payout.id, null);
  }

  private async minedOnBestChain(txid: string): Promise<boolean> {
    return (await this.blockOf(txid)) !== null;
  }

  /** The best-chain block holding `txid`: its depth (the block itself is 1) and time; null when none does. */
  private async blockOf(txid: string): Promise<{ confirmations: number; time: number } | null> {
    try {
      const tx = await this.o.rpc.call<{ blockhash?: string }>('getrawtransaction', [txid, true]);
      if (!tx.blockhash) return null;
      const header = await this.o.rpc.call<{ confirmations: number; time: number }>('getblockheader', [tx.blockhash]);
      return header.confirmations > 0 ? header : null;
    } catch {
      return null;
    }
  }

  /**
   * Where a payout stands for its withdrawal or refund: FINAL once a version of it is
   * `confirmations` deep on the node's best chain (that version becomes the one in force), PENDING
   * before, and while nothing is signed for it. A mined UTXO transaction cannot fail; a version reorganised away is unmined again, and
   * `tendPending` sends it again (it tends every payout not found final here, and the last 7 days' payouts).
   */
  async settlement(id: string, confirmations: number): Promise<PayoutSettlement> {
    const payout = await store.findPayout(this.o.sql, this.network, id);
    if (!payout) return { state: 'PENDING' }; // nothing signed for it yet
    const attempts = (await store.payoutAttempts(this.o.sql, this.network, id)).map((a) => a.txid);
    for (const txid of new Set([payout.txid, ...attempts])) {
      const block = await this.blockOf(txid);
      if (!block) continue;
      if (block.confirmations < confirmations) return { state: 'PENDING' };
      if (txid !== payout.txid) await store.movePayoutTo(this.o.sql, this.network, id, payout.txid, txid);
      await store.markPayoutFinal(this.o.sql, this.network, id);
      return { state: 'FINAL', txHash: txid, success: true, at: new Date(block.time * 1000) };
    }
    return { state: 'PENDING' };
  }

  /**
   * The signer's pass over the payouts not yet found final, and those of the last `withinDays` (every minute): each is looked up
   * first, every signed version of it (a replacement, or the version it replaced, may be the one
   * mined, or the one in the mempool). On a chain with RBF, a payout whose last version was signed
   * `bumpAfterMs` ago, while the market asks more than its version in force pays, is replaced
   * (`bumpFee`); the others are sent again, the same bytes (a node restart or a full mempool may have
   * dropped them). A refused broadcast stays recorded on its row; other failures leave the rest
   * tended and are thrown together at the end, for the log. Also the recovery after a crash or a
   * node outage. Returns how many unmined payouts it sent.
   */
  async tendPending(bumpAfterMs: number, now: Date = new Date(), withinDays = store.RECENT_PAYOUT_DAYS): Promise<number> {
    // Two signers' passes at once could each sign a replacement from the same version: one pass a
    // network at a time (a session lock, as the scanner's: no transaction is held across node calls).
    return (await withSessionLock(this.o.sql, `kassa-utxo-payouts:${this.network}`, () => this.tend(bumpAfterMs, now, withinDays))) ?? 0;
  }

  private async tend(bumpAfterMs: number, now: Date, withinDays: number): Promise<number> {
    const failures: unknown[] = [];
    let sent = 0;
    let market: bigint | undefined;
    for (const open of await store.payoutsToTend(this.o.sql, this.network, withinDays)) {
      try {
        const state = await this.refresh(open);
        // Mined, and older than the window: final for the pass, though its record ended without
        // `settlement` marking it (a signer of an earlier version settled it).
        if (state === 'MINED' && !open.recent) await store.markPayoutFinal(this.o.sql, this.network, open.id);
        if (state !== 'UNMINED') continue;
        const waited = now.getTime() - open.signedAt.getTime() >= bumpAfterMs;
        if (this.o.params.rbf && waited && open.changeIndex !== null) {
          market ??= (await this.feeRate()).satPerKvb;
          if (market > satPerVbToKvb(open.feeRate)) {
            const bumped = await this.bumpFee(open, market);
            if (bumped === 'REPLACED') sent++;
            // A refusal stays recorded on the row: sending the version in force again would clear it.
            if (bumped !== 'NOT_BUMPABLE') continue;
          }
        }
        const payout = await store.findPayout(this.o.sql, this.network, open.id);
        if (payout) await this.broadcast(payout).then(() => sent++, (e) => (e instanceof PayoutBroadcastError ? undefined : Promise.reject(e)));
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${this.network}: ${failures.length} unmined payout(s) could not be tended`);
    return sent;
  }

  /**
   * Where the payout's versions are: MINED when one is on the best chain, MOVED when another version
   * than the row's is in the node's mempool (a crash between a replacement's send and its record),
   * UNMINED otherwise. The version found becomes the one in force (compare-and-set from the version
   * read), so the payout shows the hash on chain. The row's own version is looked up too, even
   * without an attempt row (one signed before the upgrade that added them).
   */
  private async refresh(open: store.OpenPayout): Promise<'MINED' | 'MOVED' | 'UNMINED'> {
    const attempts = (await store.payoutAttempts(this.o.sql, this.network, open.id)).map((a) => a.txid);
    const versions = [...new Set([open.txid, ...attempts])];
    for (const txid of versions) {
      if (!(await this.minedOnBestChain(txid))) continue;
      if (txid !== open.txid) await store.movePayoutTo(this.o.sql, this.network, open.id, open.txid, txid);
      return 'MINED';
    }
    for (const txid of versions) {
      if (txid === open.txid || !(await this.inMempool(txid))) continue;
      await store.movePayoutTo(this.o.sql, this.network, open.id, open.txid, txid);
      return 'MOVED';
    }
    return 'UNMINED';
  }

  private async inMempool(txid: string): Promise<boolean> {
    return this.o.rpc.call('getmempoolentry', [txid]).then(
      () => true,
      (error) => (error instanceof RpcError ? false : Promise.reject(error)),
    );
  }

  /**
   * Replace a stuck payout (BIP-125): the same inputs and payee output, the change less the dearer
   * fee (`replacementFee`), signed, stored, then sent; the payout moves to it only once the node took
   * it, and only from the version it was read at, so a refused replacement leaves the previous
   * version in force. NOT_BUMPABLE, and nothing signed, when the change cannot pay for the bump, or
   * is already spent by a later payout (after a reorganisation: replacing it would orphan that one).
   */
  async bumpFee(open: store.OpenPayout, marketSatPerKvb: bigint): Promise<'REPLACED' | 'REFUSED' | 'NOT_BUMPABLE'> {
    const payout = await store.findPayout(this.o.sql, this.network, open.id);
    if (!payout || open.changeIndex === null || payout.txid !== open.txid) return 'NOT_BUMPABLE';
    if (await store.changeSpent(this.o.sql, this.network, open.txid, open.changeIndex)) return 'NOT_BUMPABLE';
    const spent = await store.outputsAt(this.o.sql, this.network, open.inputs);
    const change = spent.reduce((sum, o) => sum + o.amount, 0n) - payout.amount - payout.fee;
    const payeeScript = scriptForAddress(payout.toAddress, this.o.params);
    const vsize = payoutVsize(SIZES[this.o.params.addressType], spent.length, outputSize(payeeScript.length), true);
    const incremental = await this.incrementalFeeRate();
    const next = replacementFee({ vsize, oldFee: payout.fee, change, marketSatPerKvb, incrementalSatPerKvb: incremental, dust: this.dust });
    if (!next) return 'NOT_BUMPABLE';
    const signed = await this.o.signer.sign({
      network: this.o.params.network,
      inputs: spent.map(unsignedInput),
      outputs: [
        { script: payeeScript, amount: payout.amount },
        { script: hex.decode(this.o.keys.derive(CHANGE, open.changeIndex).script), amount: next.change },
      ],
    });
    // The estimate is an upper bound; the signed size decides (a relay requires the increment over it).
    if (next.fee - payout.fee < feeFor(signed.vsize, incremental)) return 'NOT_BUMPABLE';
    // What the replacement pays (rounded down), what the next pass compares with the market.
    const feeRate = kvbToSatPerVb((next.fee * 1000n) / BigInt(signed.vsize));
    await store.insertAttempt(this.o.sql, this.network, open.id, { txid: signed.txid, rawTx: signed.hex, fee: next.fee, feeRate });
    try {
      await this.o.rpc.call<string>('sendrawtransaction', [signed.hex]);
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      await store.recordBroadcast(this.o.sql, this.network, open.id, `replacement ${signed.txid} refused: ${error.message}`);
      return 'REFUSED';
    }
    return (await store.movePayoutTo(this.o.sql, this.network, open.id, open.txid, signed.txid)) ? 'REPLACED' : 'REFUSED';
  }

  /** The relay's minimum fee increase for a replacement, sat/kvB (`getnetworkinfo.incrementalfee`; 1 sat/vB if unknown). */
  private async incrementalFeeRate(): Promise<bigint> {
    const info = await this.o.rpc.call<{ incrementalfee?: string }>('getnetworkinfo').catch(() => ({ incrementalfee: undefined }));
    return info.incrementalfee ? toBaseUnits(info.incrementalfee) : 1000n;
  }

  /** Rebroadcast a stored payout by id (e.g. from a sweep of payouts not yet mined). */
  async rebroadcast(id: string): Promise<PayoutResult> {
    const payout = await store.findPayout(this.o.sql, this.network, id);
    if (!payout) throw new PayoutConflictError(`no payout ${id}`);
    await this.broadcast(payout);
    return { txHash: payout.txid };
  }
}
