/**
 * `KASSA_SIGNER_MNEMONIC_FILE`, read the same way by every signer (UTXO and EVM): only the signer
 * role, or the combined process, calls this. A file that its group or others may read or write is
 * refused (0600, or the stricter 0400), and so is one that does not hold a BIP-39 English mnemonic.
 * The words come back normalised: one space between them, whatever the file's line breaks.
 */
import { readFileSync, statSync } from 'node:fs';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/** The signer's configuration cannot be used (the file, or an xpub that is not the mnemonic's). */
export class SignerConfigError extends Error {
  override name = 'SignerConfigError';
}

export function readMnemonicFile(path: string): string {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SignerConfigError(`KASSA_SIGNER_MNEMONIC_FILE ${path} has mode ${mode.toString(8).padStart(4, '0')}; it must be 0600 (readable by its owner only)`);
  }
  const mnemonic = readFileSync(path, 'utf8').trim().split(/\s+/).join(' ');
  if (!validateMnemonic(mnemonic, wordlist)) throw new SignerConfigError(`KASSA_SIGNER_MNEMONIC_FILE ${path} does not hold a valid BIP-39 mnemonic`);
  return mnemonic;
}
