/**
 * The bitcoin-like family: BTC, LTC and BCH. BIP44 keys, P2WPKH (bech32)
 * deposit addresses on BTC and LTC, CashAddr on BCH; legacy base58 and
 * segwit (BIP173/BIP350) addresses accepted as destinations; BIP21 payment
 * URIs; transaction ids in hex.
 */
import { bech32, bech32m } from '@scure/base';
import { concatBytes } from '@noble/hashes/utils.js';
import { OK, bad, type AddressValidation, type NetworkRules } from './family.rules.js';
import { b58checkDecode, bip44Keys, hash160, hex } from './keys.rules.js';

type Base58Rules = { name: string; versions: number[]; testnetVersions: number[] };
type SegwitRules = Base58Rules & { hrp: string; testnetHrps: string[] };

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

const BCH_LEGACY_RULES: Base58Rules = { name: 'Bitcoin Cash', versions: [0x00, 0x05], testnetVersions: [0x6f, 0xc4] };

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

/* ───────────────────────── the three networks ───────────────────────── */

/** A segwit network: P2WPKH deposit addresses at BIP44 coin type `coin`, BIP21 URIs under `scheme`. */
function segwitNetwork(rules: SegwitRules, coin: number, scheme: string, currencies: NetworkRules['currencies']): NetworkRules {
  // P2WPKH: witness version 0 over hash160 of the compressed key.
  const addressOf = (publicKey: Uint8Array) => bech32.encode(rules.hrp, [0, ...bech32.toWords(hash160(publicKey))]);
  return {
    family: 'utxo',
    currencies,
    ...bip44Keys(coin, addressOf),
    validateAddress: (address) => validateBitcoinLike(address, rules),
    paymentUri: ({ address, amount }) => `${scheme}:${address}?amount=${amount}`,
    formatTxHash: hex,
  };
}

/** SLIP-44 coin types. */
const COIN = { BTC: 0, LTC: 2, BCH: 145 } as const;

export const UTXO_NETWORKS = {
  BCH: {
    family: 'utxo',
    currencies: { BCH: { fee: '0.00001', min: '0.0001', payout: { max: '500' } } },
    // CashAddr P2PKH over hash160 of the compressed key.
    ...bip44Keys(COIN.BCH, (publicKey) => cashAddrEncode('bitcoincash', 0, hash160(publicKey))),
    validateAddress: validateBch,
    // A CashAddr carries its chain as its prefix (bitcoincash:, bchtest:, bchreg:), which is also the URI's scheme.
    paymentUri: ({ address, amount }) => `${address.includes(':') ? address : `bitcoincash:${address}`}?amount=${amount}`,
    formatTxHash: hex,
  },
  BTC: segwitNetwork(
    { name: 'Bitcoin', hrp: 'bc', testnetHrps: ['tb', 'bcrt'], versions: [0x00, 0x05], testnetVersions: [0x6f, 0xc4] },
    COIN.BTC,
    'bitcoin',
    { BTC: { fee: '0.00002', min: '0.0001', payout: { max: '10' } } },
  ),
  // Litecoin: L… (0x30), M… (0x32) and the legacy 3… P2SH (0x05) that predates M….
  LTC: segwitNetwork(
    { name: 'Litecoin', hrp: 'ltc', testnetHrps: ['tltc', 'rltc'], versions: [0x30, 0x32, 0x05], testnetVersions: [0x6f, 0x3a, 0xc4] },
    COIN.LTC,
    'litecoin',
    { LTC: { fee: '0.0001', min: '0.001', payout: { max: '5000' } } },
  ),
} satisfies Record<string, NetworkRules>;
