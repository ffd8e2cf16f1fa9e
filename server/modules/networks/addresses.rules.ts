/**
 * Deposit-address derivation and address/tag validation for every supported
 * network: the checks common to all, then the network's family
 * (families/<family>.rules.ts) for its own rules. Pure, no I/O.
 */
import { NETWORK_RULES, NETWORKS, type AddressValidation, type Network } from './families/index.js';

export type { AddressValidation } from './families/index.js';

const bad = (reason: string): AddressValidation => ({ valid: false, reason });

/**
 * Derive the deposit address for `index` (integer, 0 <= index < 2^31) on `network`, deterministically from
 * `seed` (16..64 bytes, the BIP32 master-seed range).
 * XRP and XLM use one shared account per seed (index 0) and tell payments apart by `destinationTag`
 * (XRP destination tag / XLM memo id) = String(index + 1), which always fits uint32.
 */
export function deriveDepositAddress(seed: Uint8Array, network: Network, index: number): { address: string; destinationTag?: string } {
  if (!(seed instanceof Uint8Array) || seed.length < 16 || seed.length > 64) {
    throw new RangeError('seed must be 16 to 64 bytes');
  }
  if (!Number.isSafeInteger(index) || index < 0 || index >= 2 ** 31) {
    throw new RangeError('index must be an integer in [0, 2^31)');
  }
  const rules = NETWORK_RULES[network];
  if (!rules) throw new Error(`Unsupported network ${String(network)}`);
  return rules.deriveAddress(seed, index);
}

/**
 * The networks where an address of `network` can also receive: those of its family. One xpub
 * serves ETH and BSC (one address sequence), so a token sent on BSC to an ETH payment's address
 * arrives at a Kassa address and must be found, judged (another network: UNPROCESSABLE) and
 * refunded rather than left unmatched.
 */
export function networksSharingAddresses(network: Network): Network[] {
  const family = NETWORK_RULES[network]?.family;
  return family ? NETWORKS.filter((other) => NETWORK_RULES[other].family === family) : [network];
}

/** Real format and checksum rules per network. `reason` is a short English sentence. */
export function validateAddress(network: Network, address: string): AddressValidation {
  if (typeof address !== 'string' || address.length === 0) return bad('The address is empty.');
  if (address.trim() !== address) return bad('The address must not have surrounding whitespace.');
  if (address.length > 128) return bad('The address is too long.');
  const rules = NETWORK_RULES[network];
  if (!rules) return bad(`Unsupported network ${String(network)}.`);
  return rules.validateAddress(address);
}

/** Optional tag/memo validation: XRP destination tag (uint32 decimal), XLM memo id (uint64 decimal); other networks take none. */
export function validateDestinationTag(network: Network, tag: string): AddressValidation {
  const rule = NETWORK_RULES[network]?.tag;
  if (!rule) return bad(`${network} does not use a destination tag or memo.`);
  // Canonical decimal only: no sign, no leading zeros, no whitespace; length-capped before BigInt.
  if (typeof tag !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(tag)) {
    return bad(`The ${rule.what} must be a non-negative decimal integer without leading zeros.`);
  }
  return BigInt(tag) <= rule.max ? { valid: true } : bad(`The ${rule.what} is out of range.`);
}
