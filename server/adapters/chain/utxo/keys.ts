/**
 * Watch-only keys and addresses from an account-level extended public key.
 * Deposit i = `<xpub>/0/i`, change i = `<xpub>/1/i`, treasury = `<xpub>/1/0`.
 * BTC/LTC: P2WPKH bech32 (via @scure/btc-signer); BCH: P2PKH CashAddr (cash-address.rules.ts).
 */
import { HDKey } from '@scure/bip32';
import { createBase58check, hex } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { Address, OutScript, p2wpkh } from '@scure/btc-signer';
import type { BTC_NETWORK } from '@scure/btc-signer/utils.js';
import { encodeCashAddress } from '@bitauth/libauth';
import { cashAddressScript, scriptCashAddress } from './cash-address.rules.js';
import type { ResolvedParams } from './params.js';

const base58check = createBase58check(sha256);

/** The two derivation branches under the account key. */
export type Branch = 0 | 1;
export const DEPOSIT: Branch = 0;
export const CHANGE: Branch = 1;
/** The treasury (hot wallet) is the first change address. */
export const TREASURY_INDEX = 0;

/**
 * Parse any SLIP-132 extended public key (xpub, tpub, zpub, vpub, Ltub, Mtub…): the 4 version
 * bytes only name a wallet convention, so they are read and ignored. Private keys are refused.
 */
export function parseAccountXpub(extendedKey: string): HDKey {
  const bytes = base58check.decode(extendedKey.trim());
  if (bytes.length !== 78) throw new Error('extended key: expected 78 bytes');
  if (bytes[45] !== 0x02 && bytes[45] !== 0x03) throw new Error('extended key: not a public key (private keys are refused)');
  const version = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
  // HDKey checks the version against the one it is told: tell it the key's own.
  return HDKey.fromExtendedKey(extendedKey.trim(), { public: version, private: version ^ 1 });
}

/** Public key, chain code: what "the same account key" means whatever the prefix. */
export function sameAccountKey(a: HDKey, b: HDKey): boolean {
  return hex.encode(a.publicKey!) === hex.encode(b.publicKey!) && hex.encode(a.chainCode!) === hex.encode(b.chainCode!);
}

export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}

/** btc-signer's network object for the resolved parameters. */
export function btcSignerNetwork(p: ResolvedParams): BTC_NETWORK {
  return { bech32: p.bech32 ?? '', pubKeyHash: p.pubKeyHash, scriptHash: p.scriptHash, wif: p.wif };
}

/** The address Kassa uses for a compressed public key on this network. */
export function addressForPublicKey(publicKey: Uint8Array, p: ResolvedParams): string {
  if (p.addressType === 'p2wpkh') return p2wpkh(publicKey, btcSignerNetwork(p)).address!;
  return encodeCashAddress({ prefix: p.cashAddrPrefix! as 'bitcoincash', type: 'p2pkh', payload: hash160(publicKey) }).address;
}

/** The output script paying `address`; throws when the address is not valid for this network and chain. */
export function scriptForAddress(address: string, p: ResolvedParams): Uint8Array {
  if (p.cashAddrPrefix) {
    const withPrefix = address.includes(':') ? address : `${p.cashAddrPrefix}:${address}`;
    const decoded = cashAddressScript(withPrefix);
    if (typeof decoded === 'string') throw new Error(`invalid ${p.network} address: ${decoded}`);
    if (decoded.prefix !== p.cashAddrPrefix) throw new Error(`address is for ${decoded.prefix}, node is on ${p.cashAddrPrefix}`);
    return decoded.script;
  }
  return OutScript.encode(Address(btcSignerNetwork(p)).decode(address));
}

/** The address of an output script, when it has a standard one on this network. */
export function addressForScript(script: Uint8Array, p: ResolvedParams): string | null {
  try {
    if (p.cashAddrPrefix) {
      return scriptCashAddress(p.cashAddrPrefix, script);
    }
    return Address(btcSignerNetwork(p)).encode(OutScript.decode(script));
  } catch {
    return null;
  }
}

export type DerivedAddress = {
  branch: Branch;
  index: number;
  address: string;
  /** Output script, hex: how outputs are matched (node versions differ in how they print addresses). */
  script: string;
  publicKey: Uint8Array;
};

/** The watch-only side of one network's account. */
export class AccountKeys {
  readonly account: HDKey;
  private readonly branches: [HDKey, HDKey];
  constructor(
    xpub: string,
    readonly params: ResolvedParams,
  ) {
    this.account = parseAccountXpub(xpub);
    this.branches = [this.account.deriveChild(0), this.account.deriveChild(1)];
  }

  derive(branch: Branch, index: number): DerivedAddress {
    if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new Error(`bad derivation index ${index}`);
    const publicKey = this.branches[branch].deriveChild(index).publicKey!;
    const address = addressForPublicKey(publicKey, this.params);
    return { branch, index, address, script: hex.encode(scriptForAddress(address, this.params)), publicKey };
  }

  depositAddress(index: number): DerivedAddress {
    return this.derive(DEPOSIT, index);
  }
  treasury(): DerivedAddress {
    return this.derive(CHANGE, TREASURY_INDEX);
  }
}
