import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { describe, expect, test } from 'vitest';
import { mnemonicToAccount } from 'viem/accounts';
import {
  accountKeyFromMnemonic,
  addressBook,
  childPrivateKey,
  parseExtendedPublicKey,
} from '../../../server/adapters/chain/evm/keys.js';
import { privateKeyToAccount } from 'viem/accounts';

const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ANVIL = 'test test test test test test test test test test test junk';
const b58 = createBase58check(sha256);

function withVersion(xpub: string, version: number): string {
  const bytes = Uint8Array.from(b58.decode(xpub));
  new DataView(bytes.buffer).setUint32(0, version);
  return b58.encode(bytes);
}

function accountXpub(mnemonic: string): string {
  return HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive("m/44'/60'/0'").publicExtendedKey;
}

describe('watch-only EVM addresses', () => {
  test('published vector: abandon…about, m/44\'/60\'/0\'/0/0', () => {
    const book = addressBook(accountXpub(ABANDON));
    expect(book.depositAddress(0)).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  test("anvil's published accounts are <xpub>/0/0 and /0/1 of its mnemonic", () => {
    const book = addressBook(accountXpub(ANVIL));
    expect(book.depositAddress(0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(book.depositAddress(1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });

  test('the watch-only path gives the same addresses as viem deriving from the mnemonic, deposits and treasury', () => {
    const book = addressBook(accountXpub(ABANDON));
    for (const index of [0, 1, 7, 1000, 2 ** 31 - 1]) {
      expect(book.depositAddress(index)).toBe(mnemonicToAccount(ABANDON, { path: `m/44'/60'/0'/0/${index}` }).address);
    }
    expect(book.treasuryAddress()).toBe(mnemonicToAccount(ABANDON, { path: "m/44'/60'/0'/1/0" }).address);
    expect(book.treasuryAddress()).not.toBe(book.depositAddress(0));
  });

  test('any SLIP-132 prefix: tpub, zpub, vpub, Ltub give the same addresses', () => {
    const xpub = accountXpub(ABANDON);
    const expected = addressBook(xpub).depositAddress(3);
    const versions = { tpub: 0x043587cf, zpub: 0x04b24746, vpub: 0x045f1cf6, Ltub: 0x019da462 };
    for (const [prefix, version] of Object.entries(versions)) {
      const encoded = withVersion(xpub, version);
      expect(encoded.startsWith(prefix)).toBe(true);
      expect(addressBook(encoded).depositAddress(3)).toBe(expected);
      expect(addressBook(encoded).normalizedXpub).toBe(xpub);
    }
  });

  test('refuses a private extended key, a bad checksum, and a bad index', () => {
    const xprv = HDKey.fromMasterSeed(mnemonicToSeedSync(ABANDON)).derive("m/44'/60'/0'").privateExtendedKey;
    expect(() => parseExtendedPublicKey(xprv)).toThrow(/private/);
    const xpub = accountXpub(ABANDON);
    const broken = xpub.slice(0, -1) + (xpub.endsWith('a') ? 'b' : 'a');
    expect(() => parseExtendedPublicKey(broken)).toThrow(/base58check/);
    expect(() => addressBook(xpub).depositAddress(-1)).toThrow(/out of range/);
    expect(() => addressBook(xpub).depositAddress(2 ** 31)).toThrow(/out of range/);
  });

  test('the signer side: the account key from the mnemonic has the same xpub and its child keys sign for the same addresses', () => {
    const account = accountKeyFromMnemonic(`  ${ABANDON.replaceAll(' ', '  ')}\n`);
    expect(account.publicExtendedKey).toBe(accountXpub(ABANDON));
    expect(privateKeyToAccount(childPrivateKey(account, 0, 0)).address).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    expect(privateKeyToAccount(childPrivateKey(account, 1, 0)).address).toBe(addressBook(accountXpub(ABANDON)).treasuryAddress());
    expect(() => accountKeyFromMnemonic('abandon abandon abandon')).toThrow(/BIP-39/);
  });
});
