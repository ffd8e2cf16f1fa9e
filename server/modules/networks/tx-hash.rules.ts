/** Transaction hashes in each network's own format (its family's), for the sandbox chain. */
import { createHash } from 'node:crypto';
import { NETWORK_RULES, type Network } from './families/index.js';

/** A deterministic hash from a seed string, formatted as `network` writes transaction ids. */
export function sandboxTxHash(network: Network, seed: string): string {
  return NETWORK_RULES[network].formatTxHash(createHash('sha256').update(`${network}:${seed}`).digest());
}
