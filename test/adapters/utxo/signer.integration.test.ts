/** The signer's start-up checks (real files in a temporary directory). */
import { chmodSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SignerConfigError, UtxoSigner } from '../../../server/adapters/chain/utxo/signer.js';
import { accountXpub, MNEMONIC } from './fixtures.js';
import { filesWithModes } from '../../helpers/owned-files.js';

const mnemonicFile = filesWithModes('kassa-signer-');

describe('UTXO signer start-up', () => {
  const xpubs = { BTC: accountXpub("m/84'/0'/0'"), LTC: accountXpub("m/84'/2'/0'"), BCH: accountXpub("m/44'/145'/0'") };

  it('starts from a 0600 mnemonic file whose account keys match every configured xpub', () => {
    const signer = UtxoSigner.fromFile(mnemonicFile('ok', `  ${MNEMONIC}\n`, 0o600), xpubs);
    expect(signer).toBeInstanceOf(UtxoSigner);
  });

  it('refuses a file others can read', () => {
    const path = mnemonicFile('open', MNEMONIC, 0o644);
    expect(() => UtxoSigner.fromFile(path, xpubs)).toThrow(/mode 0644; it must be 0600/);
    chmodSync(path, 0o640);
    expect(() => UtxoSigner.fromFile(path, xpubs)).toThrow(SignerConfigError);
  });

  it('refuses when a configured xpub is not the mnemonic’s', () => {
    const path = mnemonicFile('other', MNEMONIC, 0o600);
    const foreign = accountXpub("m/84'/2'/0'", 'legal winner thank year wave sausage worth useful legal winner thank yellow');
    expect(() => UtxoSigner.fromFile(path, { ...xpubs, LTC: foreign })).toThrow(/KASSA_LTC_XPUB is not the account key/);
    // the BTC path's key configured for LTC: same mnemonic, wrong account
    expect(() => UtxoSigner.fromFile(path, { LTC: xpubs.BTC })).toThrow(/KASSA_LTC_XPUB/);
  });

  it('refuses a file that is not a BIP-39 mnemonic', () => {
    const path = mnemonicFile('bad', 'abandon abandon abandon', 0o600);
    expect(() => UtxoSigner.fromFile(path, xpubs)).toThrow(/valid BIP-39 mnemonic/);
  });
});
