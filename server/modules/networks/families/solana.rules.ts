/**
 * The Solana family: ed25519 keys (Kassa's own derivation, keys.rules.ts),
 * base58 addresses, Solana Pay URIs (`spl-token` for USDC), transaction ids
 * that are base58 signatures of 64 bytes.
 */
import { base58 } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { OK, bad, nativeOrTokenUri, type AddressValidation, type NetworkRules } from './family.rules.js';
import { ed25519PublicKey } from './keys.rules.js';

function validateSolana(address: string): AddressValidation {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(address);
  } catch {
    return bad('Not a valid Solana address: bad base58 characters.');
  }
  // Any 32-byte value is accepted: program-derived addresses are deliberately off the ed25519 curve.
  return bytes.length === 32 ? OK : bad('Not a valid Solana address: it must decode to 32 bytes.');
}

const currencies: NetworkRules['currencies'] = {
  SOL: { fee: '0.000005', min: '0.01', payout: { max: '5000' }, since: '2024-05-16' },
  USDC: { fee: '0.01', min: '1', payout: { max: '1000000' }, since: '2024-05-16', token: { contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 } },
};

export const SOLANA_NETWORKS = {
  SOL: {
    family: 'solana',
    currencies,
    addressOf: base58.encode,
    deriveAddress: (seed, index) => ({ address: base58.encode(ed25519PublicKey(seed, 'SOL', index)) }),
    validateAddress: validateSolana,
    paymentUri: nativeOrTokenUri(currencies, {
      native: ({ address, amount }) => `solana:${address}?amount=${amount}`,
      token: ({ address, amount }, token) => `solana:${address}?amount=${amount}&spl-token=${token.contract}`,
    }),
    // A signature is 64 bytes: the 32 given and their hash.
    formatTxHash: (bytes) => base58.encode(concatBytes(bytes, sha256(bytes))),
  },
} satisfies Record<string, NetworkRules>;
