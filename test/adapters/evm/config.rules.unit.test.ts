import { describe, expect, test } from 'vitest';
import { parseTokens, readNetworkConfig, splitRpcCredentials } from '../../../server/adapters/chain/evm/config.rules.js';

describe('EVM environment', () => {
  test('tokens: CURRENCY=0x… list, EIP-55, refusals', () => {
    expect(parseTokens('USDT=0xdac17f958d2ee523a2206206994597c13d831ec7, USDC=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')).toEqual([
      { currency: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7' },
      { currency: 'USDC', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
    ]);
    expect(() => parseTokens('USDT')).toThrow(/CURRENCY=0xADDRESS/);
    expect(() => parseTokens('USDT=0x1234')).toThrow(/not an address/);
    expect(() => parseTokens('USDT=0xdac17f958d2ee523a2206206994597c13d831ec7,USDT=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')).toThrow(/twice/);
  });

  test('a network is on only with its RPC URL; confirmations default per network', () => {
    expect(readNetworkConfig({}, 'ETH')).toBeUndefined();
    expect(() => readNetworkConfig({ KASSA_ETH_RPC_URL: 'http://x' }, 'ETH')).toThrow(/KASSA_ETH_XPUB/);
    const eth = readNetworkConfig({ KASSA_ETH_RPC_URL: 'http://x', KASSA_ETH_XPUB: 'xpubX' }, 'ETH');
    expect(eth).toEqual({ network: 'ETH', rpcUrl: 'http://x', xpub: 'xpubX', confirmations: 12, tokens: undefined, feeBumpAfterS: 600 });
    expect(readNetworkConfig({ KASSA_BSC_RPC_URL: 'http://x', KASSA_BSC_XPUB: 'x' }, 'BSC')?.confirmations).toBe(15);
    expect(readNetworkConfig({ KASSA_BSC_RPC_URL: 'http://x', KASSA_BSC_XPUB: 'x', KASSA_BSC_CONFIRMATIONS: '3' }, 'BSC')?.confirmations).toBe(3);
    expect(() => readNetworkConfig({ KASSA_ETH_RPC_URL: 'http://x', KASSA_ETH_XPUB: 'x', KASSA_ETH_CONFIRMATIONS: '0' }, 'ETH')).toThrow(/≥ 1/);
  });

  test('a stuck transaction is replaced after KASSA_<NET>_FEE_BUMP_AFTER_S seconds: 600 unless set, 0 allowed, anything else refused by name', () => {
    const base = { KASSA_ETH_RPC_URL: 'http://x', KASSA_ETH_XPUB: 'x' };
    expect(readNetworkConfig(base, 'ETH')?.feeBumpAfterS).toBe(600);
    expect(readNetworkConfig({ ...base, KASSA_ETH_FEE_BUMP_AFTER_S: '90' }, 'ETH')?.feeBumpAfterS).toBe(90);
    expect(readNetworkConfig({ ...base, KASSA_ETH_FEE_BUMP_AFTER_S: '0' }, 'ETH')?.feeBumpAfterS).toBe(0);
    expect(() => readNetworkConfig({ ...base, KASSA_ETH_FEE_BUMP_AFTER_S: '10m' }, 'ETH')).toThrow(/KASSA_ETH_FEE_BUMP_AFTER_S must be a whole number of seconds/);
  });

  test('credentials in the URL become a Basic header and leave the URL', () => {
    expect(splitRpcCredentials('https://node.example/rpc')).toEqual({ url: 'https://node.example/rpc', headers: {} });
    const split = splitRpcCredentials('http://kassa:p%40ss%3Aw@127.0.0.1:8545/');
    expect(split.url).toBe('http://127.0.0.1:8545/');
    expect(split.headers.authorization).toBe(`Basic ${Buffer.from('kassa:p@ss:w').toString('base64')}`);
  });
});
