/** Signing against published vectors: BIP-143 (P2WPKH, btc-signer) and a BCH SIGHASH_FORKID transaction (libauth). */
import { describe, expect, it } from 'vitest';
import { hex } from '@scure/base';
import { SigHash, Transaction } from '@scure/btc-signer';
import { decodeTransaction, hexToBin, type TransactionBCH } from '@bitauth/libauth';
import { bchSighash, signBchTransaction } from '../../../server/adapters/chain/utxo/bch.js';
import { secp256k1 } from '@bitauth/libauth';
import { UtxoSigner } from '../../../server/adapters/chain/utxo/signer.js';
import { AccountKeys } from '../../../server/adapters/chain/utxo/keys.js';
import { accountXpub, MNEMONIC } from './fixtures.js';
import { scriptForAddress } from '../../../server/adapters/chain/utxo/keys.js';
import { resolveParams } from '../../../server/adapters/chain/utxo/params.js';

describe('BIP-143 native P2WPKH vector', () => {
  const unsigned =
    '0100000002fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f0000000000eeffffffef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa815988ac11000000';
  const privateKey = hex.decode('619c335025c7f4012e556c2a58b2506e30b8511b53ade95ea316fd8c3286feb9');
  const scriptCode = hex.decode('76a9141d0f172a0ecb48aee1be1f2687d2963ae33f71a188ac');

  it('computes the published sighash and signature for the P2WPKH input', () => {
    const tx = Transaction.fromRaw(hex.decode(unsigned), { allowUnknownOutputs: true });
    tx.updateInput(1, { witnessUtxo: { script: hex.decode('00141d0f172a0ecb48aee1be1f2687d2963ae33f71a1'), amount: 600_000_000n } });
    const preimage = tx.preimageWitnessV0(1, scriptCode, SigHash.ALL, 600_000_000n);
    expect(hex.encode(preimage)).toBe('c37af31116d1b27caf68aae9e3ac82f1477929014d5b917657d0eb49478cb670');
    expect(tx.signIdx(privateKey, 1)).toBe(true);
    const [publicKey, signature] = tx.getInput(1).partialSig![0]!;
    expect(hex.encode(signature!)).toBe(
      '304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee01',
    );
    expect(hex.encode(publicKey!)).toBe('025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee6357');
  });
});

describe('BCH SIGHASH_FORKID vector (mainnet transaction 96ee2000…, published by Trust Wallet Core)', () => {
  const privateKey = hex.decode('7fdafb9db5bc501f2096e7d13d331dc7a75d9594af3d251313ba8b6200f4e384');
  const encoded =
    '0100000001e28c2b955293159898e34c6840d99bf4d390e2ee1c6f606939f18ee1e2000d05020000006b483045022100b70d158b43cbcded60e6977e93f9a84966bc0cec6f2dfd1463d1223a90563f0d02207548d081069de570a494d0967ba388ff02641d91cadb060587ead95a98d4e3534121038eab72ec78e639d02758e7860cdec018b49498c307791f785aa3019622f4ea5bffffffff0258020000000000001976a914769bdff96a02f9135a1d19b749db6a78fe07dc9088ace5100000000000001976a9149e089b6889e032d46e3b915a3392edfd616fb1c488ac00000000';
  const bch = resolveParams('BCH', 'main');
  const from = scriptForAddress('qzhlrcrcne07x94h99thved2pgzdtv8ccujjy73xya', bch);
  const outputs = [
    { script: hex.decode('76a914769bdff96a02f9135a1d19b749db6a78fe07dc9088ac'), amount: 600n },
    { script: scriptForAddress('bitcoincash:qz0q3xmg38sr94rw8wg45vujah7kzma3cskxymnw06', bch), amount: 4325n },
  ];

  it('signs to the exact broadcast transaction and txid', () => {
    const signed = signBchTransaction(
      [{ txid: '050d00e2e18ef13969606f1ceee290d3f49bd940684ce39898159352952b8ce2', vout: 2, amount: 5151n, lockingScript: from, privateKey }],
      outputs,
      { version: 1 },
    );
    expect(signed.hex).toBe(encoded);
    expect(signed.txid).toBe('96ee20002b34e468f9d3c5ee54f6a8ddaa61c118889c4f35395c2cd93ba5bbb4');
  });

  it('commits to the published FORKID digest', () => {
    const tx = decodeTransaction(hexToBin(encoded)) as TransactionBCH;
    const digest = bchSighash(tx, [{ lockingBytecode: from, valueSatoshis: 5151n }], 0, from);
    expect(hex.encode(digest)).toBe('1136d4975aee4ff6ccf0b8a9c640532f563b48d9856fdc9682c37a071702937c');
  });
});

describe('the signer on BCH', () => {
  it('signs each input with the key of its own derivation path, SIGHASH_ALL|FORKID, final sequence', async () => {
    const xpub = accountXpub("m/44'/145'/0'");
    const signer = new UtxoSigner(MNEMONIC, { BCH: xpub });
    const keys = new AccountKeys(xpub, resolveParams('BCH', 'main'));
    const deposit = keys.derive(0, 3);
    const change = keys.derive(1, 1);
    const inputs = [
      { txid: '11'.repeat(32), vout: 0, amount: 40_000n, script: deposit.script, branch: 0 as const, idx: 3 },
      { txid: '22'.repeat(32), vout: 5, amount: 70_000n, script: change.script, branch: 1 as const, idx: 1 },
    ];
    const outputs = [{ script: hex.decode(keys.derive(1, 2).script), amount: 100_000n }];
    const signed = await signer.sign({ network: 'BCH', inputs, outputs });
    const tx = decodeTransaction(hexToBin(signed.hex)) as TransactionBCH;
    const sources = inputs.map((i) => ({ lockingBytecode: hex.decode(i.script), valueSatoshis: i.amount }));
    [deposit, change].forEach((owner, index) => {
      const unlocking = tx.inputs[index]!.unlockingBytecode;
      const sigLength = unlocking[0]!;
      const signature = unlocking.slice(1, 1 + sigLength);
      const publicKey = unlocking.slice(2 + sigLength);
      expect(signature.at(-1)).toBe(0x41);
      expect(hex.encode(publicKey)).toBe(hex.encode(owner.publicKey));
      const digest = bchSighash(tx, sources, index, hex.decode(inputs[index]!.script));
      expect(secp256k1.verifySignatureDERLowS(signature.slice(0, -1), publicKey, digest)).toBe(true);
      expect(tx.inputs[index]!.sequenceNumber).toBe(0xffffffff);
    });
    expect(signed.txid).toHaveLength(64);
  });
});
