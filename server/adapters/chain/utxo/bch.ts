/**
 * Bitcoin Cash transactions with @bitauth/libauth: P2PKH inputs signed with
 * SIGHASH_ALL | SIGHASH_FORKID (the BIP-143-style digest BCH requires), no hand-written serialisation.
 */
import {
  encodeDataPush,
  encodeTransaction,
  generateSigningSerializationBCH,
  hash256,
  hashTransaction,
  hexToBin,
  secp256k1,
  type Input,
  type Output,
  type TransactionBCH,
} from '@bitauth/libauth';

export const SIGHASH_ALL_FORKID = 0x41;

export type BchInput = {
  txid: string;
  vout: number;
  amount: bigint;
  /** The spent output's locking script (P2PKH). */
  lockingScript: Uint8Array;
  privateKey: Uint8Array;
  sequence?: number;
};
export type BchOutput = { script: Uint8Array; amount: bigint };

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The digest a FORKID signature of input `index` commits to (exposed for the vector test). */
export function bchSighash(transaction: TransactionBCH, sourceOutputs: Output[], index: number, coveredBytecode: Uint8Array): Uint8Array {
  const serialization = generateSigningSerializationBCH(
    { inputIndex: index, sourceOutputs, transaction },
    { coveredBytecode, signingSerializationType: Uint8Array.of(SIGHASH_ALL_FORKID) },
  );
  return hash256(serialization);
}

export function signBchTransaction(
  inputs: BchInput[],
  outputs: BchOutput[],
  options: { version?: number; locktime?: number } = {},
): { hex: string; txid: string } {
  const transaction: TransactionBCH = {
    version: options.version ?? 2,
    locktime: options.locktime ?? 0,
    inputs: inputs.map(
      (i): Input => ({
        outpointTransactionHash: hexToBin(i.txid),
        outpointIndex: i.vout,
        sequenceNumber: i.sequence ?? 0xffffffff,
        unlockingBytecode: new Uint8Array(),
      }),
    ),
    outputs: outputs.map((o): Output => ({ lockingBytecode: o.script, valueSatoshis: o.amount })),
  };
  const sourceOutputs: Output[] = inputs.map((i) => ({ lockingBytecode: i.lockingScript, valueSatoshis: i.amount }));
  const signed = inputs.map((input, index) => {
    const digest = bchSighash(transaction, sourceOutputs, index, input.lockingScript);
    const signature = secp256k1.signMessageHashDER(input.privateKey, digest);
    if (typeof signature === 'string') throw new Error(`BCH signing failed: ${signature}`);
    const publicKey = secp256k1.derivePublicKeyCompressed(input.privateKey);
    if (typeof publicKey === 'string') throw new Error(`BCH key: ${publicKey}`);
    return concat(encodeDataPush(concat(signature, Uint8Array.of(SIGHASH_ALL_FORKID))), encodeDataPush(publicKey));
  });
  const final: TransactionBCH = {
    ...transaction,
    inputs: transaction.inputs.map((input, i) => ({ ...input, unlockingBytecode: signed[i]! })),
  };
  const bytes = encodeTransaction(final);
  return { hex: Buffer.from(bytes).toString('hex'), txid: hashTransaction(bytes) };
}
