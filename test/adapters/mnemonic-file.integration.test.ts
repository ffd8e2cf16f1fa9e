/**
 * One rule for KASSA_SIGNER_MNEMONIC_FILE, whichever signer reads it (server/adapters/chain/
 * mnemonic-file.ts): owner-only (0600 or 0400) and a valid BIP-39 mnemonic. The UTXO signer used
 * to refuse 0400 while the EVM signer took it, and the EVM signer took any text as far as its key
 * derivation. Real files in a temporary directory.
 */
import { describe, expect, it } from 'vitest';
import { readMnemonicFile, SignerConfigError } from '../../server/adapters/chain/mnemonic-file.js';
import { UtxoSigner } from '../../server/adapters/chain/utxo/signer.js';
import { signerAccountKey } from '../../server/adapters/chain/evm/signer.js';
import { accountKeyFromMnemonic, addressBook } from '../../server/adapters/chain/evm/keys.js';
import { accountXpub, MNEMONIC } from './utxo/fixtures.js';
import { filesWithModes } from '../helpers/owned-files.js';

const file = filesWithModes('kassa-mnemonic-');

describe('the mnemonic file', () => {
  it.each([0o600, 0o400])('mode %o is read, its words normalised', (mode) => {
    expect(readMnemonicFile(file(`ok-${mode}`, `\n  ${MNEMONIC.replaceAll(' ', ' \n ')}  \n`, mode))).toBe(MNEMONIC);
  });

  it.each([0o640, 0o644, 0o604, 0o660, 0o606])('mode %o is refused, naming the file and the rule', (mode) => {
    const path = file(`open-${mode}`, MNEMONIC, mode);
    expect(() => readMnemonicFile(path)).toThrow(SignerConfigError);
    expect(() => readMnemonicFile(path)).toThrow(`KASSA_SIGNER_MNEMONIC_FILE ${path} has mode 0${mode.toString(8)}; it must be 0600 (readable by its owner only)`);
  });

  it.each([
    ['not words', 'correct horse battery staple'],
    ['a bad checksum', MNEMONIC.replace(/about$/, 'abandon')],
    ['an empty file', ''],
  ])('%s is refused as not a BIP-39 mnemonic', (_what, content) => {
    const path = file(`bad-${content.length}`, content, 0o600);
    expect(() => readMnemonicFile(path)).toThrow(`KASSA_SIGNER_MNEMONIC_FILE ${path} does not hold a valid BIP-39 mnemonic`);
  });

  it('both signers start from the same 0400 file, and both refuse the same 0640 one', () => {
    const strict = file('both-0400', MNEMONIC, 0o400);
    const utxo = UtxoSigner.fromFile(strict, { BTC: accountXpub("m/84'/0'/0'") });
    expect(utxo).toBeInstanceOf(UtxoSigner);
    const evmXpub = accountKeyFromMnemonic(MNEMONIC).publicExtendedKey;
    expect(signerAccountKey({ mnemonicFile: strict, xpub: evmXpub, network: 'ETH' }).book.normalizedXpub).toBe(addressBook(evmXpub).normalizedXpub);
    const group = file('both-0640', MNEMONIC, 0o640);
    expect(() => UtxoSigner.fromFile(group, { BTC: accountXpub("m/84'/0'/0'") })).toThrow(/mode 0640; it must be 0600/);
    expect(() => signerAccountKey({ mnemonicFile: group, xpub: evmXpub, network: 'ETH' })).toThrow(/mode 0640; it must be 0600/);
  });
});
