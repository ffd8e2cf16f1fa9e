/**
 * The XRP Ledger family: one shared classic r-address per seed (BIP44 coin
 * type 144, index 0), payments told apart by a destination tag (uint32);
 * `ripple:` payment URIs; transaction ids in upper-case hex.
 */
import { base58xrp } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes } from '@noble/hashes/utils.js';
import { OK, bad, sharedAccountKeys, type AddressValidation, type NetworkRules } from './family.rules.js';
import { bip44PublicKey, hash160 } from './keys.rules.js';

const XRP_COIN = 144;

/*
 * XRP base58check: same 4-byte double-SHA256 checksum as Bitcoin, but the ripple alphabet.
 * createBase58check() has the bitcoin alphabet baked in and @scure/base 2.x no longer exports
 * `utils.chain`/`utils.checksum`, so the checksum is appended/verified here around `base58xrp`.
 */
const checksum4 = (payload: Uint8Array): Uint8Array => sha256(sha256(payload)).slice(0, 4);
const xrpEncode = (payload: Uint8Array): string => base58xrp.encode(concatBytes(payload, checksum4(payload)));

function xrpDecode(address: string): Uint8Array | undefined {
  let raw: Uint8Array;
  try {
    raw = base58xrp.decode(address);
  } catch {
    return undefined;
  }
  if (raw.length < 5) return undefined;
  const payload = raw.slice(0, -4);
  const sum = checksum4(payload);
  return sum.every((b, i) => b === raw[raw.length - 4 + i]) ? payload : undefined;
}

/** A classic r-address: version 0x00 and the account id, hash160 of the public key. */
const addressOf = (publicKey: Uint8Array) => xrpEncode(concatBytes(Uint8Array.of(0x00), hash160(publicKey)));

function validateXrp(address: string): AddressValidation {
  if (/^[XT]/.test(address) && address.length === 47) {
    return bad('X-addresses are not supported; use the classic r-address and a destination tag.');
  }
  if (!address.startsWith('r')) return bad('Classic XRP addresses start with r.');
  const data = xrpDecode(address);
  if (!data) return bad('Not a valid XRP address: bad characters or checksum.');
  if (data.length !== 21 || data[0] !== 0x00) return bad('Not a valid XRP address: expected a 20-byte account id.');
  return OK;
}

export const XRP_NETWORKS = {
  XRP: {
    family: 'xrp',
    currencies: { XRP: { fee: '0.000012', min: '2', payout: { max: '1000000' } } },
    tag: { max: 0xffff_ffffn, what: 'XRP destination tag (uint32)' },
    coinType: XRP_COIN,
    ...sharedAccountKeys(addressOf, (seed) => bip44PublicKey(seed, XRP_COIN, 0)),
    validateAddress: validateXrp,
    paymentUri: ({ address, amount, tag }) => `ripple:${address}?amount=${amount}${tag ? `&dt=${tag}` : ''}`,
    formatTxHash: (bytes) => bytesToHex(bytes).toUpperCase(),
  },
} satisfies Record<string, NetworkRules>;
