/**
 * Bitcoin Cash addresses and their output scripts. Pure.
 *
 * The CashAddr text itself (prefix, checksum, type and payload) is libauth's `encodeCashAddress` /
 * `decodeCashAddress`. Only the three standard scripts a CashAddr can name are written here, the way
 * libauth's `cashAddressToLockingBytecode` and `lockingBytecodeToCashAddress` write them (the unit
 * test holds them to those), because the file holding those two also loads libauth's WebAssembly hash
 * and curve instances, ~9 MiB resident in every process that imports it, though only BCH signing
 * needs them (server/adapters/chain/utxo/bch.ts, a chunk of its own in the build).
 */
import { decodeCashAddress, encodeCashAddress } from '@bitauth/libauth';

const OP_DUP = 0x76;
const OP_HASH160 = 0xa9;
const OP_HASH256 = 0xaa;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_CHECKSIG = 0xac;

/** P2PKH: OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG; P2SH: OP_HASH160 <20> OP_EQUAL, or OP_HASH256 <32> OP_EQUAL (P2SH32). */
function scriptOf(type: 'p2pkh' | 'p2sh', payload: Uint8Array): Uint8Array {
  if (type === 'p2pkh') return Uint8Array.of(OP_DUP, OP_HASH160, 20, ...payload, OP_EQUALVERIFY, OP_CHECKSIG);
  return payload.length === 32 ? Uint8Array.of(OP_HASH256, 32, ...payload, OP_EQUAL) : Uint8Array.of(OP_HASH160, 20, ...payload, OP_EQUAL);
}

/** The hash a standard script pays to, with the CashAddr type naming it; null for any other script. */
function payloadOf(script: Uint8Array): { type: 'p2pkh' | 'p2sh'; payload: Uint8Array } | null {
  const [a, b, c] = script;
  if (script.length === 25 && a === OP_DUP && b === OP_HASH160 && c === 20 && script[23] === OP_EQUALVERIFY && script[24] === OP_CHECKSIG) {
    return { type: 'p2pkh', payload: script.slice(3, 23) };
  }
  if (script.length === 23 && a === OP_HASH160 && b === 20 && script[22] === OP_EQUAL) return { type: 'p2sh', payload: script.slice(2, 22) };
  if (script.length === 35 && a === OP_HASH256 && b === 32 && script[34] === OP_EQUAL) return { type: 'p2sh', payload: script.slice(2, 34) };
  return null;
}

/** The output script paying a CashAddr (with its prefix), and that prefix; a string says why it is not one. */
export function cashAddressScript(address: string): { prefix: string; script: Uint8Array } | string {
  const decoded = decodeCashAddress(address);
  if (typeof decoded === 'string') return decoded;
  // Token-aware addresses (z…/r…) name the same scripts: a payout of BCH to one is a plain output.
  const type = decoded.type === 'p2pkh' || decoded.type === 'p2pkhWithTokens' ? 'p2pkh' : 'p2sh';
  const length = decoded.payload.length;
  if (length !== 20 && !(type === 'p2sh' && length === 32)) return `a ${type} CashAddr carries ${length} bytes, not a standard script's hash`;
  return { prefix: decoded.prefix, script: scriptOf(type, decoded.payload) };
}

/** The CashAddr (with its prefix) of a standard output script; null for a script no CashAddr names. */
export function scriptCashAddress(prefix: string, script: Uint8Array): string | null {
  const contents = payloadOf(script);
  if (!contents) return null;
  // libauth types the prefix as its three networks' names; any prefix encodes.
  const encoded = encodeCashAddress({ prefix: prefix as 'bitcoincash', type: contents.type, payload: contents.payload, throwErrors: false });
  return typeof encoded === 'string' ? null : encoded.address;
}
