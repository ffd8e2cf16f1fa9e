/**
 * Kassa's deposit addresses: derived from a seed that is itself derived from
 * the master key, so addresses survive restarts and need no chain call (a
 * payment gets its address inside its create transaction).
 */
import { createHmac } from 'node:crypto';
import type { Network } from '../money/index.js';
import { deriveDepositAddress } from './addresses.rules.js';

export type DepositAddress = { address: string; destinationTag?: string };

/** One seed object per master key: the derivation cache (addresses.rules.ts) is keyed by the seed's identity. */
const seeds = new WeakMap<Buffer, Uint8Array>();

export function depositSeed(masterKey: Buffer): Uint8Array {
  let seed = seeds.get(masterKey);
  if (!seed) seeds.set(masterKey, (seed = createHmac('sha256', masterKey).update('kassa/sandbox-deposit-seed').digest()));
  return seed;
}

/** The deposit address (and tag, on XRP/XLM) for derivation index `index`. Deterministic. */
export function depositAddress(masterKey: Buffer, network: Network, index: number): DepositAddress {
  return deriveDepositAddress(depositSeed(masterKey), network, index);
}
