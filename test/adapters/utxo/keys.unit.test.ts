/** Keys and addresses against published vectors: BIP-84, the CashAddr specification. */
import { describe, expect, it } from 'vitest';
import { HDKey } from '@scure/bip32';
import { hex } from '@scure/base';
import { Address, OutScript } from '@scure/btc-signer';
import { AccountKeys, addressForScript, parseAccountXpub, sameAccountKey, scriptForAddress } from '../../../server/adapters/chain/utxo/keys.js';
import { resolveParams } from '../../../server/adapters/chain/utxo/params.js';
import { encodeCashAddress } from '@bitauth/libauth';
import { accountXpub } from './fixtures.js';

// BIP-84 test vectors (mnemonic "abandon ×11 about"): the account zprv is published; its zpub
// (SLIP-132 version 0x04b24746) is the usual vector string.
const BIP84_ZPRV = 'zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE';
const BIP84_ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

describe('watch-only keys', () => {
  it('the published zprv gives the vector zpub', () => {
    const account = HDKey.fromExtendedKey(BIP84_ZPRV, { private: 0x04b2430c, public: 0x04b24746 });
    expect(account.publicExtendedKey).toBe(BIP84_ZPUB);
  });

  it('derives the BIP-84 receive and change addresses from the zpub (SLIP-132 prefix accepted)', () => {
    const keys = new AccountKeys(BIP84_ZPUB, resolveParams('BTC', 'main'));
    expect(keys.depositAddress(0).address).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(hex.encode(keys.depositAddress(0).publicKey)).toBe('0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c');
    expect(keys.depositAddress(1).address).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    expect(keys.treasury().address).toBe('bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el');
    expect(keys.depositAddress(0).script).toBe('0014' + 'c0cebcd6c3d3ca8c75dc5ec62ebe55330ef910e2');
  });

  it('ignores version bytes: the xpub, zpub and vpub encodings of one key derive the same addresses', () => {
    const plain = accountXpub("m/84'/0'/0'");
    const asZpub = parseAccountXpub(BIP84_ZPUB);
    expect(sameAccountKey(parseAccountXpub(plain), asZpub)).toBe(true);
    const vpub = new HDKey({
      versions: { private: 0x045f18bc, public: 0x045f1cf6 },
      depth: asZpub.depth,
      index: asZpub.index,
      parentFingerprint: asZpub.parentFingerprint,
      chainCode: asZpub.chainCode!,
      publicKey: asZpub.publicKey!,
    }).publicExtendedKey;
    expect(vpub.startsWith('vpub')).toBe(true);
    for (const key of [plain, BIP84_ZPUB, vpub]) {
      expect(new AccountKeys(key, resolveParams('BTC', 'main')).depositAddress(0).address).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    }
    // The chain comes from the node, never from the prefix: the same zpub on regtest gives bcrt1…
    expect(new AccountKeys(BIP84_ZPUB, resolveParams('BTC', 'regtest')).depositAddress(0).address).toMatch(/^bcrt1q/);
  });

  it('refuses private extended keys and garbage', () => {
    expect(() => parseAccountXpub(BIP84_ZPRV)).toThrow(/private/);
    expect(() => parseAccountXpub('xpub123')).toThrow();
  });

  it('uses the chain prefixes of each network', () => {
    const ltc = accountXpub("m/84'/2'/0'");
    expect(new AccountKeys(ltc, resolveParams('LTC', 'main')).depositAddress(0).address).toMatch(/^ltc1q/);
    expect(new AccountKeys(ltc, resolveParams('LTC', 'test')).depositAddress(0).address).toMatch(/^tltc1q/);
    expect(new AccountKeys(ltc, resolveParams('LTC', 'regtest')).depositAddress(0).address).toMatch(/^rltc1q/);
    const bch = accountXpub("m/44'/145'/0'");
    expect(new AccountKeys(bch, resolveParams('BCH', 'main')).depositAddress(0).address).toMatch(/^bitcoincash:q/);
    expect(new AccountKeys(bch, resolveParams('BCH', 'test')).depositAddress(0).address).toMatch(/^bchtest:q/);
    expect(new AccountKeys(bch, resolveParams('BCH', 'regtest')).depositAddress(0).address).toMatch(/^bchreg:q/);
  });

  it('refuses an address of another chain or network', () => {
    const params = resolveParams('LTC', 'regtest');
    expect(() => scriptForAddress('ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', params)).toThrow();
    expect(() => scriptForAddress('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', resolveParams('BTC', 'test'))).toThrow();
    expect(() => scriptForAddress('bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t', resolveParams('BCH', 'main'))).toThrow();
  });
});

describe('CashAddr (specification vectors)', () => {
  const payload = hex.decode('f5bf48b397dae70be82b3cca4793f8eb2b6cdac9');
  it('encodes the specification payload', () => {
    expect(encodeCashAddress({ prefix: 'bitcoincash', type: 'p2pkh', payload }).address).toBe('bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2');
    expect(encodeCashAddress({ prefix: 'bchtest', type: 'p2sh', payload }).address).toBe('bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t');
    expect(encodeCashAddress({ prefix: 'pref' as 'bitcoincash', type: 'p2sh', payload }).address).toBe('pref:pr6m7j9njldwwzlg9v7v53unlr4jkmx6ey65nvtks5');
  });

  it('maps the specification legacy ⇄ CashAddr pairs to the same output script', () => {
    const bch = resolveParams('BCH', 'main');
    const btc = Address(); // legacy base58 mainnet, as the specification pairs them
    const pairs: [string, string][] = [
      ['16w1D5WRVKJuZUsSRzdLp9w3YGcgoxDXb', 'bitcoincash:qqq3728yw0y47sqn6l2na30mcw6zm78dzqre909m2r'],
      ['3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC', 'bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq'],
      ['3LDsS579y7sruadqu11beEJoTjdFiFCdX4', 'bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e'],
    ];
    for (const [legacy, cash] of pairs) {
      const script = scriptForAddress(cash, bch);
      expect(hex.encode(script)).toBe(hex.encode(OutScript.encode(btc.decode(legacy))));
      expect(addressForScript(script, bch)).toBe(cash);
      // the prefix may be omitted
      expect(hex.encode(scriptForAddress(cash.split(':')[1]!, bch))).toBe(hex.encode(script));
    }
  });
});
