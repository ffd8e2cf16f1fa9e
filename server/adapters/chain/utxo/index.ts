/**
 * The Bitcoin-family engine (BTC, LTC, BCH) behind one facade per network: watch-only deposit
 * addresses from the xpub, a block/mempool scanner that reports deposits to a sink, and payouts
 * signed by the signer role from the outputs the scanner tracks. Self-contained: it imports
 * nothing from the rest of Kassa (see README.md for how to wire it behind the chain port).
 */
import { AccountKeys } from './keys.js';
import { RpcClient } from './rpc.js';
import { confirmationsFor, resolveParams, type ResolvedParams, type UtxoNetwork } from './params.js';
import { UtxoScanner } from './scanner.js';
import { UtxoWallet } from './wallet.js';
import { countCreditedOffChain, creditedThenReorged, readScanState, RECENT_PAYOUT_DAYS, replacedPayouts, type Sql } from './store.js';
import { scriptForAddress } from './keys.js';
import type { PayoutSigner } from './signer.js';
import type { DepositSink, PayoutRequest, PayoutResult, PayoutSettlement } from './types.js';

export type UtxoEngineConfig = {
  network: UtxoNetwork;
  /** `KASSA_<NET>_RPC_URL`, credentials in the URL. */
  rpcUrl: string;
  /** `KASSA_<NET>_XPUB`. */
  xpub: string;
  /** `KASSA_<NET>_CONFIRMATIONS`; default per network (BTC 2, LTC 6, BCH 6). */
  confirmations?: number;
  /** `KASSA_<NET>_FALLBACK_FEE_RATE`, sat/vB; default "10". */
  fallbackFeeRate?: string;
  sql: Sql;
  sink: DepositSink;
  /** Only in the signer role (or the combined process): without it `payout` refuses. */
  signer?: PayoutSigner;
  startHeight?: number;
  gap?: number;
  highestAssignedIndex?: () => Promise<number>;
  rpcTimeoutMs?: number;
};

export type UtxoEngine = {
  network: UtxoNetwork;
  params: ResolvedParams;
  confirmations: number;
  /** Deposit address `index` (`<xpub>/0/index`): deterministic, no I/O. */
  depositAddress(index: number): string;
  /** The same, and watched from now on (writes to the database). */
  watchDeposit(index: number): Promise<string>;
  treasuryAddress(): string;
  /** Whether `address` is a valid address of the node's chain (e.g. `rltc1…` on a Litecoin regtest). */
  isValidAddress(address: string): boolean;
  /** One scanner pass: new blocks, reorgs, mempool, reports to the sink. Run it from a job every few seconds. */
  scan: UtxoScanner['scan'];
  payout(request: PayoutRequest): Promise<PayoutResult>;
  rebroadcast(id: string): Promise<PayoutResult>;
  /**
   * The signer's pass: every recent payout not yet mined is sent again (same bytes), or, on BTC/LTC,
   * replaced at the market's fee once unmined for `bumpAfterMs` (`UtxoWallet.tendPending`); the number sent.
   */
  tendPending(bumpAfterMs: number): Promise<number>;
  /** Payouts replaced at least once, with the hash each now stands for (the one mined, or the latest sent). */
  replacedPayouts(): Promise<{ id: string; txHash: string }[]>;
  /** Signer role: whether payout `id` is final (`confirmations` deep on the best chain) or still on its way. */
  settlement(id: string): Promise<PayoutSettlement>;
  /** For `/ready` and `/metrics`: the scanner's height, its lag behind the node, reorgs seen. */
  health(): Promise<{
    ok: boolean;
    height: number | null;
    tip: number | null;
    lag: number | null;
    reorgs: number;
    lastScanAt: Date | null;
    creditedOffChain: number;
    error?: string;
  }>;
  /** Credited deposits whose block later left the best chain (operator review). */
  creditedThenReorged(): ReturnType<typeof creditedThenReorged>;
};

/** Connects to the node, learns its chain (`getblockchaininfo`), creates the tables if needed. */
export async function createUtxoEngine(config: UtxoEngineConfig): Promise<UtxoEngine> {
  const rpc = new RpcClient(config.rpcUrl, { timeoutMs: config.rpcTimeoutMs });
  const info = await rpc.call<{ chain: string }>('getblockchaininfo');
  const params = resolveParams(config.network, info.chain);
  const keys = new AccountKeys(config.xpub, params);
  const confirmations = confirmationsFor(config.network, config.confirmations);
  const scanner = new UtxoScanner({
    rpc,
    sql: config.sql,
    keys,
    params,
    confirmations,
    sink: config.sink,
    startHeight: config.startHeight,
    gap: config.gap,
    highestAssignedIndex: config.highestAssignedIndex,
  });
  const wallet = config.signer
    ? new UtxoWallet({ rpc, sql: config.sql, keys, params, signer: config.signer, fallbackFeeRate: config.fallbackFeeRate })
    : null;
  const noSigner = () => Promise.reject(new Error(`${config.network}: this process has no signer (KASSA_SIGNER_MNEMONIC_FILE, --role=signer)`));
  return {
    network: config.network,
    params,
    confirmations,
    depositAddress: (index) => keys.depositAddress(index).address,
    watchDeposit: (index) => scanner.watchDeposit(index),
    treasuryAddress: () => keys.treasury().address,
    isValidAddress: (address) => {
      try {
        scriptForAddress(address, params);
        return true;
      } catch {
        return false;
      }
    },
    scan: () => scanner.scan(),
    payout: (request) => (wallet ? wallet.payout(request) : noSigner()),
    rebroadcast: (id) => (wallet ? wallet.rebroadcast(id) : noSigner()),
    tendPending: (bumpAfterMs) => (wallet ? wallet.tendPending(bumpAfterMs) : Promise.resolve(0)),
    replacedPayouts: () => replacedPayouts(config.sql, config.network, RECENT_PAYOUT_DAYS),
    settlement: (id) => (wallet ? wallet.settlement(id, confirmations) : noSigner()),
    health: async () => {
      const cursor = await readScanState(config.sql, config.network);
      const base = {
        height: cursor?.height ?? null,
        reorgs: cursor?.reorgs ?? 0,
        lastScanAt: cursor?.lastScanAt ?? null,
        creditedOffChain: await countCreditedOffChain(config.sql, config.network),
      };
      try {
        const tip = await rpc.probe<number>('getblockcount');
        return { ok: true, ...base, tip, lag: cursor ? Math.max(0, tip - cursor.height) : null };
      } catch (error) {
        return { ok: false, ...base, tip: null, lag: null, error: (error as Error).message };
      }
    },
    creditedThenReorged: () => creditedThenReorged(config.sql, config.network),
  };
}

export { AccountKeys, parseAccountXpub } from './keys.js';
export { PROBE_TIMEOUT_MS, RpcClient, RpcError, RpcUnavailableError } from './rpc.js';
export { NETWORK_PARAMS, UTXO_NETWORKS, resolveParams, type UtxoNetwork } from './params.js';
export { UtxoSigner, SignerConfigError, type PayoutSigner } from './signer.js';
export { PayoutBroadcastError, PayoutConflictError } from './wallet.js';
export { InsufficientFundsError } from './wallet.rules.js';
export type { UtxoDepositReport, DepositSink, PayoutRequest, PayoutResult, PayoutSettlement, ChainState } from './types.js';
