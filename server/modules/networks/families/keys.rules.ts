/**
 * Key derivation and encodings more than one family shares. Encodings come
 * from audited libraries (@scure/bip32, @scure/base, @noble/hashes,
 * @noble/curves); pure, no I/O.
 */
import { HDKey } from '@scure/bip32';
import { createBase58check } from '@scure/base';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { hmac } from '@noble/hashes/hmac.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ed25519 } from '@noble/curves/ed25519.js';

export const b58check = createBase58check(sha256);
export const hash160 = (data: Uint8Array): Uint8Array => ripemd160(sha256(data));

export function b58checkDecode(address: string): Uint8Array | undefined {
  try {
    return b58check.decode(address);
  } catch {
    return undefined;
  }
}

/**
 * The external chain of each coin's first account, m/44'/coin'/0'/0, per
 * seed: deriving it takes four levels of elliptic-curve work that every
 * address of the coin shares, so it is done once (a payment then derives one
 * level). Keyed by the seed's identity: a seed buffer lives as long as its
 * chain adapter.
 */
const externalChains = new WeakMap<Uint8Array, Map<number, HDKey>>();

function externalChain(seed: Uint8Array, coin: number): HDKey {
  let byCoin = externalChains.get(seed);
  if (!byCoin) externalChains.set(seed, (byCoin = new Map()));
  let node = byCoin.get(coin);
  if (!node) byCoin.set(coin, (node = HDKey.fromMasterSeed(seed).derive(`m/44'/${coin}'/0'/0`)));
  return node;
}

/** Compressed secp256k1 public key at m/44'/coin'/0'/0/index; `coin` is the SLIP-44 coin type. */
export function bip44PublicKey(seed: Uint8Array, coin: number, index: number): Uint8Array {
  const key = externalChain(seed, coin).deriveChild(index);
  if (!key.publicKey) throw new Error('BIP32 derivation produced no public key');
  return key.publicKey;
}

/**
 * ed25519 public key for (network, index).
 * @scure/bip32 is secp256k1-only, so the 32-byte ed25519 secret is
 * HMAC-SHA512(key = seed, msg = utf8("kassa/" + network + "/" + index))[0..32].
 * This is Kassa's own deterministic scheme — it is NOT SLIP-10, so these keys cannot be re-derived by
 * standard wallets from the same seed. A production deployment would use SLIP-10 or an external wallet.
 */
export function ed25519PublicKey(seed: Uint8Array, network: 'SOL' | 'XLM', index: number): Uint8Array {
  const secret = hmac(sha512, seed, utf8ToBytes(`kassa/${network}/${index}`)).slice(0, 32);
  return ed25519.getPublicKey(secret);
}

/** Keccak-256 of the 64-byte uncompressed point (no 0x04 prefix), last 20 bytes: the EVM/TRON account id. */
export function evmAccountId(compressedPubKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(compressedPubKey).toBytes(false);
  return keccak_256(uncompressed.subarray(1)).slice(-20);
}

export const hex = bytesToHex;

/**
 * The key side of a network whose deposit keys are BIP44 secp256k1 keys:
 * its coin type, how a public key is written as an address, and the
 * deposit address of `index` (m/44'/coin'/0'/0/index) from the seed.
 */
export const bip44Keys = (coinType: number, addressOf: (publicKey: Uint8Array) => string) => ({
  coinType,
  addressOf,
  deriveAddress: (seed: Uint8Array, index: number) => ({ address: addressOf(bip44PublicKey(seed, coinType, index)) }),
});
