import { describe, expect, test } from 'vitest';
import { LiveChainConfigError, readLiveChainConfig } from '../../../server/adapters/chain/live/live-config.js';

describe('live chain environment, UTXO networks', () => {
  const ltc = { KASSA_LTC_RPC_URL: 'http://kassa:pw@127.0.0.1:9332', KASSA_LTC_XPUB: 'xpubX' };

  test('a stuck BTC/LTC payout is replaced after KASSA_<NET>_FEE_BUMP_AFTER_S seconds: 600 unless set, 0 allowed, anything else refused by name', () => {
    expect(readLiveChainConfig(ltc).utxo).toEqual([
      { network: 'LTC', rpcUrl: ltc.KASSA_LTC_RPC_URL, xpub: 'xpubX', confirmations: 6, fallbackFeeRate: undefined, feeBumpAfterS: 600 },
    ]);
    expect(readLiveChainConfig({ ...ltc, KASSA_LTC_FEE_BUMP_AFTER_S: '120' }).utxo[0]!.feeBumpAfterS).toBe(120);
    expect(readLiveChainConfig({ ...ltc, KASSA_LTC_FEE_BUMP_AFTER_S: '0' }).utxo[0]!.feeBumpAfterS).toBe(0);
    expect(() => readLiveChainConfig({ ...ltc, KASSA_LTC_FEE_BUMP_AFTER_S: '10m' })).toThrow(LiveChainConfigError);
    expect(() => readLiveChainConfig({ ...ltc, KASSA_LTC_FEE_BUMP_AFTER_S: '10m' })).toThrow(/KASSA_LTC_FEE_BUMP_AFTER_S must be a whole number of seconds/);
  });

  test('BCH has no replace-by-fee: KASSA_BCH_FEE_BUMP_AFTER_S is refused by name instead of silently doing nothing', () => {
    const bch = { KASSA_BCH_RPC_URL: 'http://kassa:pw@127.0.0.1:8332', KASSA_BCH_XPUB: 'xpubB' };
    expect(readLiveChainConfig(bch).utxo.map((c) => c.network)).toEqual(['BCH']);
    expect(readLiveChainConfig({ ...bch, KASSA_BCH_FEE_BUMP_AFTER_S: ' ' }).utxo).toHaveLength(1);
    expect(() => readLiveChainConfig({ ...bch, KASSA_BCH_FEE_BUMP_AFTER_S: '600' })).toThrow(LiveChainConfigError);
    expect(() => readLiveChainConfig({ ...bch, KASSA_BCH_FEE_BUMP_AFTER_S: '600' })).toThrow(/KASSA_BCH_FEE_BUMP_AFTER_S: BCH has no replace-by-fee/);
    // Only for BCH: the same variable of LTC beside it is still read.
    expect(readLiveChainConfig({ ...bch, ...ltc, KASSA_LTC_FEE_BUMP_AFTER_S: '60' }).utxo.find((c) => c.network === 'LTC')!.feeBumpAfterS).toBe(60);
  });
});

describe('settings that would silently turn a network or a token off are refused by name', () => {
  test("a network's variables without its node's URL (its name misspelt, its value empty)", () => {
    const env = { KASSA_ETH_RPC_URL: 'http://127.0.0.1:8545', KASSA_ETH_XPUB: 'xpubE', KASSA_LTC_XPUB: 'zpubL', KASSA_LTC_CONFIRMATIONS: '3', KASSA_LTC_RPC_URI: 'http://x' };
    expect(() => readLiveChainConfig(env)).toThrow(LiveChainConfigError);
    expect(() => readLiveChainConfig(env)).toThrow(
      'KASSA_LTC_XPUB, KASSA_LTC_CONFIRMATIONS are set but KASSA_LTC_RPC_URL is not, so LTC would be off: set its node\'s URL, or unset them',
    );
    expect(() => readLiveChainConfig({ ...env, KASSA_LTC_XPUB: undefined, KASSA_LTC_CONFIRMATIONS: undefined, KASSA_BSC_XPUB: 'xpubB', KASSA_LTC_RPC_URL: ' ' })).toThrow(
      /KASSA_BSC_XPUB is set but KASSA_BSC_RPC_URL is not, so BSC would be off/,
    );
    // Empty values count as unset.
    expect(readLiveChainConfig({ ...env, KASSA_LTC_XPUB: ' ', KASSA_LTC_CONFIRMATIONS: '' }).evm.map((c) => c.network)).toEqual(['ETH']);
  });

  test('a token Kassa does not take on the network (USTD for USDT, BTC on ETH)', () => {
    const eth = { KASSA_ETH_RPC_URL: 'http://127.0.0.1:8545', KASSA_ETH_XPUB: 'xpubE' };
    const contract = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    expect(readLiveChainConfig({ ...eth, KASSA_ETH_TOKENS: `USDT=${contract}` }).evm[0]!.tokens).toEqual([{ currency: 'USDT', address: contract }]);
    expect(() => readLiveChainConfig({ ...eth, KASSA_ETH_TOKENS: `USTD=${contract}` })).toThrow('KASSA_ETH_TOKENS: USTD is not a token Kassa takes on ETH (it takes ');
    expect(() => readLiveChainConfig({ ...eth, KASSA_ETH_TOKENS: `BTC=${contract}` })).toThrow(/KASSA_ETH_TOKENS: BTC is not a token Kassa takes on ETH/);
  });
});
