/**
 * Payouts of one UTXO network from the outputs the scanner tracks: coin selection, change to a
 * fresh `<xpub>/1/i`, fee rate from `estimatesmartfee` (floor, fallback), signing by the signer
 * role. The signed raw transaction is STORED (with its inputs marked spent) in one database
 * transaction before any broadcast; a retry of the same payout id only ever rebroadcasts that
 * stored transaction, so a crash at any point neither loses nor doubles a payout.
 */
import { hex } from '@scure/base';
import { Decimal } from 'decimal.js';
import { AccountKeys, CHANGE, scriptForAddress } from './keys.js';
import { toBaseUnits } from './amounts.js';
import { RpcError, RPC_CODES, type RpcClient } from './rpc.js';
import * as store from './store.js';
import { chooseFeeRate, isSpendable, outputSize, satPerVbToKvb, selectCoins, SIZES, type FeeEstimate } from './wallet.rules.js';
import type { ResolvedParams } from './params.js';
import type { PayoutSigner, UnsignedInput } from './signer.js';
import type { PayoutRequest, PayoutResult } from './types.js';

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

export class UtxoWallet {
  private readonly network: string;
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
          dust: this.o.dust ?? 546n,
        });
        const inputs: UnsignedInput[] = selection.inputs.map((c) => {
          const o = byKey.get(c.key)!;
          return { txid: o.txid, vout: o.vout, amount: o.amount, script: o.script, branch: o.branch, idx: o.idx };
        });
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
        const signed = this.o.signer.sign({ network: this.o.params.network, inputs, outputs });
        const row = {
          id: request.id,
          toAddress: request.toAddress,
          amount,
          txid: signed.txid,
          rawTx: signed.hex,
          fee: selection.fee,
          feeRate: new Decimal(rate.satPerKvb.toString()).div(1000).toFixed(), // sat/vB
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
    try {
      const tx = await this.o.rpc.call<{ blockhash?: string }>('getrawtransaction', [txid, true]);
      if (!tx.blockhash) return false;
      return (await this.o.rpc.call<{ confirmations: number }>('getblockheader', [tx.blockhash])).confirmations > 0;
    } catch {
      return false;
    }
  }

  /**
   * Send every recent payout that is not mined on the best chain again, the
   * same bytes (a node restart or a full mempool may have dropped it).
   * Returns how many were sent; a refusal stays recorded on its row.
   */
  async rebroadcastPending(withinDays = 7): Promise<number> {
    const rows = await this.o.sql<{ id: string; txid: string }[]>`
      select id, txid from utxo_payouts where network = ${this.network} and created_at > now() - make_interval(days => ${withinDays})`;
    let sent = 0;
    for (const row of rows) {
      if (await this.minedOnBestChain(row.txid)) continue;
      const payout = await store.findPayout(this.o.sql, this.network, row.id);
      if (!payout) continue;
      await this.broadcast(payout).then(() => sent++, () => {});
    }
    return sent;
  }

  /** Rebroadcast a stored payout by id (e.g. from a sweep of payouts not yet mined). */
  async rebroadcast(id: string): Promise<PayoutResult> {
    const payout = await store.findPayout(this.o.sql, this.network, id);
    if (!payout) throw new PayoutConflictError(`no payout ${id}`);
    await this.broadcast(payout);
    return { txHash: payout.txid };
  }
}
