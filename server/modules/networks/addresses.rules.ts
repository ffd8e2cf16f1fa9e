/**
 * Deposit-address derivation and address/tag validation for every supported network.
 *
 * Pure functions, no I/O. Encodings come from audited libraries wherever they have the primitive
 * (@scure/bip32, @scure/base, @noble/hashes, @noble/curves); the only hand-written pieces are the
 * CashAddr checksum, the StrKey CRC16 and the 4-byte checksum around the XRP base58 alphabet, each
 * of which the libraries do not provide.
 */
import { HDKey } from '@scure/bip32';
import { base32nopad, base58, base58xrp, bech32, bech32m, createBase58check } from '@scure/base';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { hmac } from '@noble/hashes/hmac.js';
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Network } from '../money/index.js';

export type AddressValidation = { valid: true } | { valid: false; reason: string };

const OK: AddressValidation = { valid: true };
const bad = (reason: string): AddressValidation => ({ valid: false, reason });

/* ───────────────────────── shared primitives ───────────────────────── */

const b58check = createBase58check(sha256);
const hash160 = (data: Uint8Array): Uint8Array => ripemd160(sha256(data));

/** BIP44 coin types (SLIP-44) for the secp256k1 networks. BSC reuses ETH's 60: it is an EVM address. */
const COIN_TYPE = { BTC: 0, LTC: 2, BCH: 145, ETH: 60, BSC: 60, TRX: 195, XRP: 144 } as const;

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

/** Compressed secp256k1 public key at m/44'/coin'/0'/0/index. */
function bip44PublicKey(seed: Uint8Array, coin: number, index: number): Uint8Array {
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
function ed25519PublicKey(seed: Uint8Array, network: 'SOL' | 'XLM', index: number): Uint8Array {
  const secret = hmac(sha512, seed, utf8ToBytes(`kassa/${network}/${index}`)).slice(0, 32);
  return ed25519.getPublicKey(secret);
}

/** Keccak-256 of the 64-byte uncompressed point (no 0x04 prefix), last 20 bytes: the EVM/TRON account id. */
function evmAccountId(compressedPubKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(compressedPubKey).toBytes(false);
  return keccak_256(uncompressed.subarray(1)).slice(-20);
}

/** EIP-55: uppercase hex letter i iff nibble i of keccak_256(lowercase hex) is >= 8. */
function eip55(lowerHex40: string): string {
  const hash = bytesToHex(keccak_256(utf8ToBytes(lowerHex40)));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lowerHex40[i]!;
    out += parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/**
 * XRP base58check: same 4-byte double-SHA256 checksum as Bitcoin, but the ripple alphabet.
 * createBase58check() has the bitcoin alphabet baked in and @scure/base 2.x no longer exports
 * `utils.chain`/`utils.checksum`, so the checksum is appended/verified here around `base58xrp`.
 */
const checksum4 = (payload: Uint8Array): Uint8Array => sha256(sha256(payload)).slice(0, 4);
function xrpEncode(payload: Uint8Array): string {
  return base58xrp.encode(concatBytes(payload, checksum4(payload)));
}
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

function b58checkDecode(address: string): Uint8Array | undefined {
  try {
    return b58check.decode(address);
  } catch {
    return undefined;
  }
}

/* ───────────────────────── CashAddr (BCH) ─────────────────────────
 * Hand-written because @scure/base has no CashAddr codec. CashAddr reuses the bech32 alphabet and
 * 8→5 bit regrouping (taken from @scure/base's bech32.toWords/fromWords) but has its own 40-bit
 * BCH-code checksum over (lower 5 bits of each prefix char) || 0 || payload words, per
 * https://upgradespecs.bitcoincashnode.org/cashaddr/ */
const CASHADDR_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const CASHADDR_GENERATORS = [0x98f2bc8e61n, 0x79b76d99e2n, 0xf33e5fb3c4n, 0xae2eabe2a8n, 0x1e4f43e470n];

function cashAddrPolymod(values: number[]): bigint {
  let c = 1n;
  for (const d of values) {
    const c0 = c >> 35n;
    c = ((c & 0x07ffffffffn) << 5n) ^ BigInt(d);
    for (let i = 0; i < 5; i++) if ((c0 >> BigInt(i)) & 1n) c ^= CASHADDR_GENERATORS[i]!;
  }
  return c ^ 1n;
}

const cashAddrPrefixWords = (prefix: string): number[] => [...prefix].map((ch) => ch.charCodeAt(0) & 0x1f);

/** version 0 = P2PKH with a 160-bit hash, 8 = P2SH with a 160-bit hash. */
function cashAddrEncode(prefix: string, version: 0 | 8, hash: Uint8Array): string {
  const words = bech32.toWords(concatBytes(Uint8Array.of(version), hash));
  const mod = cashAddrPolymod([...cashAddrPrefixWords(prefix), 0, ...words, 0, 0, 0, 0, 0, 0, 0, 0]);
  const checksum = Array.from({ length: 8 }, (_, i) => Number((mod >> BigInt(5 * (7 - i))) & 31n));
  return `${prefix}:${[...words, ...checksum].map((w) => CASHADDR_CHARSET[w]).join('')}`;
}

/* ───────────────────────── StrKey (XLM) ───────────────────────── */

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

/* ───────────────────────── derivation ───────────────────────── */

/**
 * Derive the deposit address for `index` (integer, 0 <= index < 2^31) on `network`, deterministically from
 * `seed` (16..64 bytes, the BIP32 master-seed range).
 * XRP and XLM use one shared account per seed (index 0) and tell payments apart by `destinationTag`
 * (XRP destination tag / XLM memo id) = String(index + 1), which always fits uint32.
 */
export function deriveDepositAddress(
  seed: Uint8Array,
  network: Network,
  index: number,
): { address: string; destinationTag?: string } {
  if (!(seed instanceof Uint8Array) || seed.length < 16 || seed.length > 64) {
    throw new RangeError('seed must be 16 to 64 bytes');
  }
  if (!Number.isSafeInteger(index) || index < 0 || index >= 2 ** 31) {
    throw new RangeError('index must be an integer in [0, 2^31)');
  }
  switch (network) {
    case 'BTC':
      return { address: bech32.encode('bc', [0, ...bech32.toWords(hash160(bip44PublicKey(seed, COIN_TYPE.BTC, index)))]) };
    case 'LTC':
      return { address: bech32.encode('ltc', [0, ...bech32.toWords(hash160(bip44PublicKey(seed, COIN_TYPE.LTC, index)))]) };
    case 'BCH':
      return { address: cashAddrEncode('bitcoincash', 0, hash160(bip44PublicKey(seed, COIN_TYPE.BCH, index))) };
    case 'ETH':
    case 'BSC':
      return { address: eip55(bytesToHex(evmAccountId(bip44PublicKey(seed, COIN_TYPE[network], index)))) };
    case 'TRX': {
      const id = evmAccountId(bip44PublicKey(seed, COIN_TYPE.TRX, index));
      return { address: b58check.encode(concatBytes(Uint8Array.of(0x41), id)) };
    }
    case 'XRP': {
      const accountId = hash160(bip44PublicKey(seed, COIN_TYPE.XRP, 0));
      return { address: xrpEncode(concatBytes(Uint8Array.of(0x00), accountId)), destinationTag: String(index + 1) };
    }
    case 'SOL':
      return { address: base58.encode(ed25519PublicKey(seed, 'SOL', index)) };
    case 'XLM':
      return { address: strKeyEncodeAccount(ed25519PublicKey(seed, 'XLM', 0)), destinationTag: String(index + 1) };
    default: {
      const unreachable: never = network;
      throw new Error(`Unsupported network ${String(unreachable)}`);
    }
  }
}

/* ───────────────────────── validation ───────────────────────── */

type Base58Rules = { name: string; versions: number[]; testnetVersions: number[] };
type SegwitRules = Base58Rules & { hrp: string; testnetHrps: string[] };

const BTC_RULES: SegwitRules = { name: 'Bitcoin', hrp: 'bc', testnetHrps: ['tb', 'bcrt'], versions: [0x00, 0x05], testnetVersions: [0x6f, 0xc4] };
// Litecoin: L… (0x30), M… (0x32) and the legacy 3… P2SH (0x05) that predates M….
const LTC_RULES: SegwitRules = { name: 'Litecoin', hrp: 'ltc', testnetHrps: ['tltc', 'rltc'], versions: [0x30, 0x32, 0x05], testnetVersions: [0x6f, 0x3a, 0xc4] };
const BCH_LEGACY_RULES: Base58Rules = { name: 'Bitcoin Cash', versions: [0x00, 0x05], testnetVersions: [0x6f, 0xc4] };

function validateBase58Legacy(address: string, rules: Base58Rules): AddressValidation {
  const data = b58checkDecode(address);
  if (!data) return bad(`Not a valid ${rules.name} address: bad base58 characters or checksum.`);
  if (data.length !== 21) return bad(`Not a valid ${rules.name} address: wrong payload length.`);
  const version = data[0]!;
  if (rules.testnetVersions.includes(version)) return bad(`This is a ${rules.name} testnet address.`);
  if (!rules.versions.includes(version)) return bad(`Not a ${rules.name} address: unexpected version byte.`);
  return OK;
}

/** BIP173 (witness v0, bech32) and BIP350 (witness v1..16, bech32m) segwit addresses. */
function validateSegwit(address: string, rules: SegwitRules): AddressValidation {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) {
    return bad('Bech32 addresses must not mix upper and lower case.');
  }
  const asBech32 = bech32.decodeUnsafe(address, 90);
  const asBech32m = asBech32 ? undefined : bech32m.decodeUnsafe(address, 90);
  const decoded = asBech32 ?? asBech32m;
  if (!decoded) return bad(`Not a valid ${rules.name} address: bad bech32 characters or checksum.`);
  if (rules.testnetHrps.includes(decoded.prefix)) return bad(`This is a ${rules.name} testnet address.`);
  if (decoded.prefix !== rules.hrp) return bad(`Not a ${rules.name} address: wrong prefix "${decoded.prefix}".`);
  const [version, ...data] = decoded.words;
  if (version === undefined) return bad('The bech32 data section is empty.');
  if (version > 16) return bad('Invalid segwit witness version.');
  if (version === 0 && !asBech32) return bad('Witness version 0 addresses must use the bech32 checksum.');
  if (version > 0 && !asBech32m) return bad('Witness version 1+ addresses must use the bech32m checksum.');
  const program = bech32.fromWordsUnsafe(data);
  if (!program) return bad('Invalid padding in the bech32 data section.');
  if (program.length < 2 || program.length > 40) return bad('Invalid segwit witness program length.');
  if (version === 0 && program.length !== 20 && program.length !== 32) {
    return bad('Witness version 0 programs must be 20 or 32 bytes.');
  }
  return OK;
}

function validateBitcoinLike(address: string, rules: SegwitRules): AddressValidation {
  const lower = address.toLowerCase();
  const isBech32 = [rules.hrp, ...rules.testnetHrps].some((hrp) => lower.startsWith(`${hrp}1`));
  return isBech32 ? validateSegwit(address, rules) : validateBase58Legacy(address, rules);
}

function validateBch(address: string): AddressValidation {
  if (address.startsWith('1') || address.startsWith('3')) return validateBase58Legacy(address, BCH_LEGACY_RULES);
  const lower = address.toLowerCase();
  if (address !== lower && address !== address.toUpperCase()) {
    return bad('CashAddr addresses must not mix upper and lower case.');
  }
  const sep = lower.lastIndexOf(':');
  const prefix = sep >= 0 ? lower.slice(0, sep) : 'bitcoincash'; // the prefix may be omitted
  const body = sep >= 0 ? lower.slice(sep + 1) : lower;
  if (prefix === 'bchtest' || prefix === 'bchreg') return bad('This is a Bitcoin Cash testnet address.');
  if (prefix !== 'bitcoincash') return bad('Not a Bitcoin Cash address: wrong CashAddr prefix.');
  const words = [...body].map((ch) => CASHADDR_CHARSET.indexOf(ch));
  if (words.length === 0 || words.some((w) => w < 0)) return bad('Not a valid Bitcoin Cash address: bad characters.');
  // 21-byte payload (version + 20-byte hash) = 34 words, plus 8 checksum words.
  if (words.length !== 42) return bad('Not a valid Bitcoin Cash address: wrong length.');
  if (cashAddrPolymod([...cashAddrPrefixWords(prefix), 0, ...words]) !== 0n) {
    return bad('Not a valid Bitcoin Cash address: bad CashAddr checksum.');
  }
  const payload = bech32.fromWordsUnsafe(words.slice(0, -8));
  if (!payload || payload.length !== 21) return bad('Not a valid Bitcoin Cash address: bad payload.');
  if (payload[0] !== 0 && payload[0] !== 8) return bad('Unsupported CashAddr version (only P2PKH and P2SH with 20-byte hashes).');
  return OK;
}

function validateEvm(address: string): AddressValidation {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return bad('Expected 0x followed by 40 hex characters.');
  const body = address.slice(2);
  // Single-case addresses carry no checksum and are accepted as is.
  if (body === body.toLowerCase() || body === body.toUpperCase()) return OK;
  return eip55(body.toLowerCase()) === address ? OK : bad('Mixed-case address has a bad EIP-55 checksum.');
}

function validateTron(address: string): AddressValidation {
  if (!address.startsWith('T')) return bad('TRON addresses start with T.');
  const data = b58checkDecode(address);
  if (!data) return bad('Not a valid TRON address: bad base58 characters or checksum.');
  if (data.length !== 21 || data[0] !== 0x41) return bad('Not a valid TRON address: expected a 0x41-prefixed 21-byte payload.');
  return OK;
}

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

/** Real format and checksum rules per network. `reason` is a short English sentence. */
export function validateAddress(network: Network, address: string): AddressValidation {
  if (typeof address !== 'string' || address.length === 0) return bad('The address is empty.');
  if (address.trim() !== address) return bad('The address must not have surrounding whitespace.');
  if (address.length > 128) return bad('The address is too long.');
  switch (network) {
    case 'BTC':
      return validateBitcoinLike(address, BTC_RULES);
    case 'LTC':
      return validateBitcoinLike(address, LTC_RULES);
    case 'BCH':
      return validateBch(address);
    case 'ETH':
    case 'BSC':
      return validateEvm(address);
    case 'TRX':
      return validateTron(address);
    case 'SOL':
      return validateSolana(address);
    case 'XRP':
      return validateXrp(address);
    case 'XLM':
      return validateStellar(address);
    default: {
      const unreachable: never = network;
      return bad(`Unsupported network ${String(unreachable)}.`);
    }
  }
}

const TAG_MAX: Partial<Record<Network, { max: bigint; what: string }>> = {
  XRP: { max: 0xffff_ffffn, what: 'XRP destination tag (uint32)' },
  XLM: { max: 0xffff_ffff_ffff_ffffn, what: 'Stellar memo id (uint64)' },
};

/** Optional tag/memo validation: XRP destination tag (uint32 decimal), XLM memo id (uint64 decimal); other networks take none. */
export function validateDestinationTag(network: Network, tag: string): AddressValidation {
  const rule = TAG_MAX[network];
  if (!rule) return bad(`${network} does not use a destination tag or memo.`);
  // Canonical decimal only: no sign, no leading zeros, no whitespace; length-capped before BigInt.
  if (typeof tag !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(tag)) {
    return bad(`The ${rule.what} must be a non-negative decimal integer without leading zeros.`);
  }
  return BigInt(tag) <= rule.max ? OK : bad(`The ${rule.what} is out of range.`);
}
