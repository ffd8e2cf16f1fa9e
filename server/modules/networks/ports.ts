/**
 * What Kassa needs from a blockchain, one `ChainPort` per network. A live
 * adapter (a node or an indexer) implements the same port as the sandbox:
 * it reports transfers to watched addresses through a `DepositSink` as they
 * are seen, confirmed or dropped, and broadcasts refunds and withdrawals.
 * Deposit addresses are not the chain's business: they are derived by the
 * network family's rules (addresses.rules.ts) from Kassa's own seed.
 *
 * A port does network I/O: only jobs reach it (the service records the
 * intent, a job calls the port outside any transaction, another transaction
 * records the result). The rule is checked by dependency-cruiser: this file
 * is imported only by `*.job.ts` files, adapters and the composition root.
 */
import type { Network } from '../money/index.js';

/** The chain's view of one output: what a watcher reports, possibly many times. */
export type ChainState = 'SEEN' | 'CONFIRMED' | 'DROPPED';

export type DepositReport = {
  network: Network;
  txHash: string;
  outputIndex: number;
  fromAddress: string;
  toAddress: string;
  destinationTag?: string | null;
  /** The transferred asset's ticker; may be one Kassa does not accept (delisted, mismatched). */
  currency: string;
  amount: string;
  state: ChainState;
  confirmations: number;
  /** What the sender paid the network, when the chain tells (UTXO: inputs − outputs). */
  onChainFee?: string;
  /** Sandbox only: the AML score a test dictates. */
  dictatedRiskScore?: string | null;
};

/** Where adapters deliver reports: Kassa's deposit ingestion. Idempotent per (network, txHash, outputIndex). */
export type DepositSink = (report: DepositReport) => Promise<unknown>;

export type Broadcast = {
  /** Idempotency key: broadcasting the same id twice returns the first transaction. */
  id: string;
  network: Network;
  currency: string;
  toAddress: string;
  destinationTag?: string | null;
  amount: string;
};

/** `confirmedAt`: final at once (the sandbox's chain); null for a live payout, final only once its block is deep enough (`PayoutSettlement`). */
export type BroadcastResult = { txHash: string; confirmedAt: Date | null };

/** A sent payout as the chain sees it: on its way, or final at the network's depth (and whether it succeeded). */
export type PayoutSettlement = { state: 'PENDING' } | { state: 'FINAL'; txHash: string; success: boolean; at: Date };

/** A credited deposit to move from its deposit address to the network's treasury. */
export type SweepRequest = { network: Network; txHash: string; outputIndex: number; currency: string; addressIndex: number };

/** DONE: swept (or nothing left to sweep); WAIT: ask again later (a gas top-up or an earlier sweep is on its way). */
export type SweepOutcome = 'DONE' | 'WAIT';

export interface ChainPort {
  readonly network: Network;
  /** Send funds (refunds, withdrawals). Idempotent per `tx.id`. */
  broadcast(tx: Broadcast): Promise<BroadcastResult>;
  /**
   * Networks whose payouts come from a treasury (EVM): sweep a credited
   * deposit to it. Absent where deposits are spent directly (UTXO, sandbox).
   */
  sweep?(request: SweepRequest): Promise<SweepOutcome>;
}

/** The chains Kassa runs on: the sandbox fills all nine networks, live adapters replace some. */
export type ChainPorts = Partial<Record<Network, ChainPort>>;

export function chainFor(chains: ChainPorts, network: Network): ChainPort {
  const port = chains[network];
  if (!port) throw new Error(`No chain adapter is configured for network ${network}.`);
  return port;
}
