/** Transaction hashes in each network's own format, for the sandbox chain. */
import { base58 } from '@scure/base';
import { createHash } from 'node:crypto';
import type { Network } from '../money/index.js';

/** A deterministic hash from a seed string, formatted as `network` writes transaction ids. */
export function sandboxTxHash(network: Network, seed: string): string {
  const bytes = createHash('sha256').update(`${network}:${seed}`).digest();
  switch (network) {
    case 'ETH':
    case 'BSC':
      return `0x${bytes.toString('hex')}`;
    case 'XRP':
      return bytes.toString('hex').toUpperCase();
    case 'SOL':
      // Solana transaction ids are base58 signatures of 64 bytes.
      return base58.encode(Buffer.concat([bytes, createHash('sha256').update(bytes).digest()]));
    default:
      return bytes.toString('hex');
  }
}
