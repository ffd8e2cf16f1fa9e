/**
 * Watch-only EVM addresses from an account-level extended public key
 * (CONTRACT §10): deposit address i = `<xpub>/0/i`, treasury = `<xpub>/1/0`,
 * EIP-55. Any SLIP-132 prefix (xpub, tpub, zpub, Ltub, …) is accepted: the
 * version bytes say nothing about an EVM chain, so they are replaced by the
 * xpub ones before decoding.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { bytesToHex, getAddress, type Address } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';

const base58check = createBase58check(sha256);

/** BIP-32 mainnet versions: the ones @scure/bip32 decodes by default. */
const XPUB_VERSION = 0x0488b21e;
const XPRV_VERSION = 0x0488ade4;

/** The EVM account path (one xpub may serve ETH and BSC). */
export const EVM_ACCOUNT_PATH = "m/44'/60'/0'";

/** Decode any SLIP-132 extended public key; refuses a private one (the watch side never holds keys). */
export function parseExtendedPublicKey(extendedKey: string): HDKey {
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(extendedKey.trim());
  } catch {
    throw new Error('extended public key: not base58check');
  }
  if (bytes.length !== 78) throw new Error(`extended public key: ${bytes.length} bytes, expected 78`);
  // Byte 45 is the key: 0x00 marks a private key, 0x02/0x03 a compressed public key.
  if (bytes[45] === 0) throw new Error('extended public key expected, got a private one');
  const rewritten = Uint8Array.from(bytes);
  new DataView(rewritten.buffer).setUint32(0, XPUB_VERSION);
  return HDKey.fromExtendedKey(base58check.encode(rewritten), { public: XPUB_VERSION, private: XPRV_VERSION });
}

/** EIP-55 address of a (compressed) secp256k1 public key. */
export function addressOfPublicKey(compressed: Uint8Array): Address {
  const uncompressed = secp256k1.Point.fromBytes(compressed).toBytes(false);
  return getAddress(publicKeyToAddress(bytesToHex(uncompressed)));
}

function childAddress(branch: HDKey, index: number): Address {
  if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new Error(`derivation index out of range: ${index}`);
  const key = branch.deriveChild(index);
  if (!key.publicKey) throw new Error('derived key has no public key');
  return addressOfPublicKey(key.publicKey);
}

/** Watch-only view of one account xpub. */
export type EvmAddressBook = {
  depositAddress: (index: number) => Address;
  treasuryAddress: () => Address;
  /** The same key material, re-encoded with xpub version bytes (to compare with a signer's). */
  normalizedXpub: string;
};

export function addressBook(extendedPublicKey: string): EvmAddressBook {
  const account = parseExtendedPublicKey(extendedPublicKey);
  // The receive branch is derived once: each address then costs one child derivation.
  const receive = account.deriveChild(0);
  const treasury = childAddress(account.deriveChild(1), 0);
  return {
    depositAddress: (index) => childAddress(receive, index),
    treasuryAddress: () => treasury,
    normalizedXpub: account.publicExtendedKey,
  };
}

/** The account key (private) behind the xpubs, from a BIP-39 mnemonic: for the signer only. */
export function accountKeyFromMnemonic(mnemonic: string, passphrase = ''): HDKey {
  const words = mnemonic.trim().split(/\s+/).join(' ');
  if (!validateMnemonic(words, wordlist)) throw new Error('the mnemonic is not a valid BIP-39 English mnemonic');
  return HDKey.fromMasterSeed(mnemonicToSeedSync(words, passphrase)).derive(EVM_ACCOUNT_PATH);
}

/** Private key of `<account>/change/index`, as viem wants it. */
export function childPrivateKey(account: HDKey, change: 0 | 1, index: number): `0x${string}` {
  const key = account.deriveChild(change).deriveChild(index);
  if (!key.privateKey) throw new Error('the account key is public only');
  return bytesToHex(key.privateKey);
}
