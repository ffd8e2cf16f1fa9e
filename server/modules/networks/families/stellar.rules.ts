/**
 * The Stellar family: one shared G… account per seed (ed25519, Kassa's own
 * derivation, keys.rules.ts), payments told apart by a memo id (uint64);
 * SEP-7 payment URIs; transaction ids in hex.
 */
import { base32nopad } from '@scure/base';
import { concatBytes } from '@noble/hashes/utils.js';
import { OK, bad, sharedAccountKeys, type AddressValidation, type NetworkRules } from './family.rules.js';
import { ed25519PublicKey, hex } from './keys.rules.js';

/** CRC16-XModem (poly 0x1021, init 0), used by Stellar StrKey (SEP-23). Too small to justify a dependency. */
function crc16xmodem(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

const STRKEY_ACCOUNT_ID = 6 << 3; // 'G…'

function strKeyEncodeAccount(publicKey: Uint8Array): string {
  const body = concatBytes(Uint8Array.of(STRKEY_ACCOUNT_ID), publicKey);
  const crc = crc16xmodem(body);
  return base32nopad.encode(concatBytes(body, Uint8Array.of(crc & 0xff, crc >> 8))); // CRC is little-endian
}

function validateStellar(address: string): AddressValidation {
  if (address.startsWith('M')) return bad('Muxed (M…) Stellar addresses are not supported; use the G… account and a memo.');
  if (address.startsWith('S')) return bad('This is a Stellar secret seed, not an account address.');
  if (!/^G[A-Z2-7]{55}$/.test(address)) return bad('Stellar account addresses are 56 base32 characters starting with G.');
  const raw = base32nopad.decode(address); // 56 chars × 5 bits = exactly 35 bytes, no spare bits
  if (raw.length !== 35 || raw[0] !== STRKEY_ACCOUNT_ID) return bad('Not a valid Stellar account address: wrong version byte.');
  const crc = crc16xmodem(raw.subarray(0, 33));
  if (raw[33] !== (crc & 0xff) || raw[34] !== crc >> 8) return bad('Not a valid Stellar account address: bad checksum.');
  return OK;
}

export const STELLAR_NETWORKS = {
  XLM: {
    family: 'stellar',
    currencies: { XLM: { fee: '0.00001', min: '2', payout: { max: '5000000' } } },
    tag: { max: 0xffff_ffff_ffff_ffffn, what: 'Stellar memo id (uint64)' },
    ...sharedAccountKeys(strKeyEncodeAccount, (seed) => ed25519PublicKey(seed, 'XLM', 0)),
    validateAddress: validateStellar,
    paymentUri: ({ address, amount, tag }) => `web+stellar:pay?destination=${address}&amount=${amount}${tag ? `&memo=${tag}&memo_type=MEMO_ID` : ''}`,
    formatTxHash: hex,
  },
} satisfies Record<string, NetworkRules>;
