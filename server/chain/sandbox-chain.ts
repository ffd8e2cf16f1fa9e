/**
 * The sandbox chain: real, correctly encoded addresses derived from a seed,
 * without a real blockchain behind them.
 */
import { createHmac } from 'node:crypto';
import type { Network } from '../money/catalog.js';
import type { ChainAdapter, DepositAddress } from './adapter.js';
import { deriveDepositAddress } from './addresses.js';

export class SandboxChain implements ChainAdapter {
  private readonly seed: Uint8Array;

  /** The address seed is derived from the master key, so addresses survive restarts. */
  constructor(masterKey: Buffer) {
    this.seed = createHmac('sha256', masterKey).update('kassa/sandbox-deposit-seed').digest();
  }

  depositAddress(network: Network, index: number): DepositAddress {
    return deriveDepositAddress(this.seed, network, index);
  }
}
