/**
 * One module per network family: each network's rules come from its family,
 * and the money catalog's currency/network tables are derived from them (a
 * network is described once). Payment URIs and transaction ids follow each
 * network's standard.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { HDKey } from '@scure/bip32';
import { base32nopad, base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import {
  CRYPTO_CURRENCIES, DEPOSIT_NETWORKS, NETWORK_FEES, NETWORKS, TAG_NETWORKS, WITHDRAWAL_NETWORKS, type Network,
} from '../../../server/modules/money/index.js';
import { NETWORK_RULES, TOKEN_CONTRACTS, deriveDepositAddress, paymentUri, sandboxTxHash } from '../../../server/modules/networks/index.js';

describe('network families', () => {
  it('each of the nine networks belongs to one family', () => {
    const byFamily: Record<string, Network[]> = {};
    for (const n of NETWORKS) (byFamily[NETWORK_RULES[n].family] ??= []).push(n);
    expect(byFamily).toEqual({
      utxo: ['BCH', 'BTC', 'LTC'],
      stellar: ['XLM'],
      xrp: ['XRP'],
      evm: ['ETH', 'BSC'],
      solana: ['SOL'],
      tron: ['TRX'],
    });
  });

  it('the catalog tables are the families’ own: deposit and payout networks, fees, tags, tokens', () => {
    for (const currency of CRYPTO_CURRENCIES) {
      const carried = NETWORKS.filter((n) => NETWORK_RULES[n].currencies[currency]);
      expect([...DEPOSIT_NETWORKS[currency]].sort(), currency).toEqual([...carried].sort());
      for (const n of carried) expect(NETWORK_FEES[currency][n], `${currency} on ${n}`).toBe(NETWORK_RULES[n].currencies[currency]!.fee);
      const payout = carried.filter((n) => NETWORK_RULES[n].currencies[currency]!.payout);
      expect([...(WITHDRAWAL_NETWORKS[currency] ?? [])].sort(), currency).toEqual([...payout].sort());
    }
    expect([...TAG_NETWORKS].sort()).toEqual(['XLM', 'XRP']);
    expect(Object.keys(TOKEN_CONTRACTS).sort()).toEqual(['BSC', 'ETH', 'SOL', 'TRX']);
    expect(Object.keys(TOKEN_CONTRACTS.ETH!).sort()).toEqual(['LINK', 'USDC', 'USDT']);
    // a network's own coin is not a token
    for (const n of NETWORKS) expect(Object.keys(TOKEN_CONTRACTS[n] ?? {})).not.toContain(n === 'BSC' ? 'BNB' : n);
  });

  it('currencies the spec added later are listed after the original networks', () => {
    expect(DEPOSIT_NETWORKS.USDC).toEqual(['ETH', 'BSC', 'TRX', 'SOL']);
    expect(WITHDRAWAL_NETWORKS.USDC).toEqual(['ETH', 'BSC', 'TRX', 'SOL']);
    expect(DEPOSIT_NETWORKS.ETH).toEqual(['ETH', 'BSC']);
  });
});

describe('payment URIs', () => {
  const uri = (network: Network, currency: string, amount: string, address: string, tag?: string) => paymentUri({ network, currency, address, amount, tag });
  it('BIP21 on the bitcoin-like networks; CashAddr keeps its prefix once', () => {
    expect(uri('BTC', 'BTC', '0.01', 'bc1qxy')).toBe('bitcoin:bc1qxy?amount=0.01');
    expect(uri('LTC', 'LTC', '1.5', 'ltc1qxy')).toBe('litecoin:ltc1qxy?amount=1.5');
    expect(uri('BCH', 'BCH', '2', 'bitcoincash:qpm2')).toBe('bitcoincash:qpm2?amount=2');
    expect(uri('BCH', 'BCH', '2', 'qpm2')).toBe('bitcoincash:qpm2?amount=2');
    // a test chain's CashAddr (a live node on testnet or regtest) keeps its own prefix as the scheme
    expect(uri('BCH', 'BCH', '2', 'bchreg:qpm2')).toBe('bchreg:qpm2?amount=2');
    expect(uri('BCH', 'BCH', '2', 'bchtest:qpm2')).toBe('bchtest:qpm2?amount=2');
  });

  it('EIP-681 with the chain id, amounts in base units, tokens through their contract', () => {
    const to = '0x52908400098527886E0F7030069857D2E4169EE7';
    expect(uri('ETH', 'ETH', '1.5', to)).toBe(`ethereum:${to}@1?value=1500000000000000000`);
    expect(uri('ETH', 'USDT', '12.345678', to)).toBe(`ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=${to}&uint256=12345678`);
    // the same USDT has 18 decimals on BSC
    expect(uri('BSC', 'USDT', '0.000001', to)).toBe(`ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=${to}&uint256=1000000000000`);
    expect(uri('BSC', 'BNB', '0.000000000000000001', to)).toBe(`ethereum:${to}@56?value=1`);
  });

  it('TRON, Solana Pay, XRP with its destination tag, Stellar SEP-7 with its memo id', () => {
    expect(uri('TRX', 'TRX', '10', 'TAddr')).toBe('tron:TAddr?amount=10');
    expect(uri('TRX', 'USDT', '10', 'TAddr')).toBe('tron:TAddr?token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t&amount=10');
    expect(uri('SOL', 'SOL', '0.5', 'SoAddr')).toBe('solana:SoAddr?amount=0.5');
    expect(uri('SOL', 'USDC', '5', 'SoAddr')).toBe('solana:SoAddr?amount=5&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(uri('XRP', 'XRP', '20', 'rAddr', '7')).toBe('ripple:rAddr?amount=20&dt=7');
    expect(uri('XRP', 'XRP', '20', 'rAddr')).toBe('ripple:rAddr?amount=20');
    expect(uri('XLM', 'XLM', '3', 'GAddr', '9')).toBe('web+stellar:pay?destination=GAddr&amount=3&memo=9&memo_type=MEMO_ID');
  });
});

describe('transaction ids', () => {
  it('each network writes them its own way, deterministically per seed', () => {
    const formats: Record<Network, RegExp> = {
      BTC: /^[0-9a-f]{64}$/, LTC: /^[0-9a-f]{64}$/, BCH: /^[0-9a-f]{64}$/, TRX: /^[0-9a-f]{64}$/, XLM: /^[0-9a-f]{64}$/,
      ETH: /^0x[0-9a-f]{64}$/, BSC: /^0x[0-9a-f]{64}$/, XRP: /^[0-9A-F]{64}$/, SOL: /^[1-9A-HJ-NP-Za-km-z]{80,90}$/,
    };
    for (const n of NETWORKS) {
      const id = sandboxTxHash(n, 'seed-1');
      expect(id, n).toMatch(formats[n]);
      expect(sandboxTxHash(n, 'seed-1')).toBe(id);
      expect(sandboxTxHash(n, 'seed-2')).not.toBe(id);
    }
    // a Solana signature is 64 bytes
    expect(base58.decode(sandboxTxHash('SOL', 'x'))).toHaveLength(64);
    // the network is part of the hash: the same seed differs across networks of one format
    expect(sandboxTxHash('BTC', 's')).not.toBe(sandboxTxHash('LTC', 's'));
  });
});

describe('addresses of public keys (what a deriver from an xpub needs)', () => {
  it('the key of private key 1 gives the addresses the standards list', () => {
    const one = new Uint8Array(32);
    one[31] = 1;
    const g = secp256k1.getPublicKey(one, true);
    expect(NETWORK_RULES.BTC.addressOf(g)).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'); // BIP173
    expect(NETWORK_RULES.ETH.addressOf(g)).toBe('0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf');
    expect(NETWORK_RULES.BSC.addressOf(g)).toBe('0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf');
    expect(NETWORK_RULES.TRX.addressOf(g)).toBe('TMVQGm1qAQYVdetCeGRRkTWYYrLXuHK2HC');
  });

  it('an account xpub derives, without the seed, the same deposit addresses as the seed', () => {
    const seed = new Uint8Array(32).map((_, i) => 255 - i * 3);
    for (const network of ['BTC', 'LTC', 'BCH', 'ETH', 'BSC', 'TRX'] as const) {
      const rules = NETWORK_RULES[network];
      const xpub = HDKey.fromMasterSeed(seed).derive(`m/44'/${rules.coinType}'/0'`).publicExtendedKey;
      const external = HDKey.fromExtendedKey(xpub).deriveChild(0);
      for (const index of [0, 1, 41]) {
        expect(rules.addressOf(external.deriveChild(index).publicKey!), `${network} ${index}`).toBe(deriveDepositAddress(seed, network, index).address);
      }
    }
    // XRP: the one shared account is the xpub's first key
    const xrp = HDKey.fromExtendedKey(HDKey.fromMasterSeed(seed).derive("m/44'/144'/0'").publicExtendedKey).deriveChild(0).deriveChild(0);
    expect(NETWORK_RULES.XRP.addressOf(xrp.publicKey!)).toBe(deriveDepositAddress(seed, 'XRP', 5).address);
  });

  it('ed25519 networks write the key itself: base58 on Solana, a StrKey on Stellar', () => {
    const stellar = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
    expect(NETWORK_RULES.XLM.addressOf(base32nopad.decode(stellar).subarray(1, 33))).toBe(stellar);
    const usdcMint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    expect(NETWORK_RULES.SOL.addressOf(base58.decode(usdcMint))).toBe(usdcMint);
    expect(NETWORK_RULES.SOL.coinType).toBeUndefined();
  });
});
