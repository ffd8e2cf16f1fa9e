/**
 * What Kassa needs from a blockchain. A production adapter (a node or an
 * indexer per network) implements the same interface as the sandbox chain.
 */
import type { Network } from '../money/catalog.js';

export type DepositAddress = { address: string; destinationTag?: string };

export interface ChainAdapter {
  /** The deposit address (and tag, on XRP/XLM) for derivation index `index`. Deterministic. */
  depositAddress(network: Network, index: number): DepositAddress;
}
