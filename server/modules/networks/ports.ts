/**
 * What Kassa needs from a blockchain. A production adapter (a node or an
 * indexer per network) implements the same interface as the sandbox chain:
 * it derives deposit addresses, reports transfers to watched addresses
 * through `DepositSink` as they are seen, confirmed or dropped, and
 * broadcasts refunds and withdrawals.
 */
import type { Network } from '../money/catalog.js';

export type DepositAddress = { address: string; destinationTag?: string };

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

export type BroadcastResult = { txHash: string; confirmedAt: Date | null };

export interface ChainAdapter {
  /** The deposit address (and tag, on XRP/XLM) for derivation index `index`. Deterministic. */
  depositAddress(network: Network, index: number): DepositAddress;
  /** Send funds (refunds, withdrawals). */
  broadcast(tx: Broadcast): Promise<BroadcastResult>;
}
