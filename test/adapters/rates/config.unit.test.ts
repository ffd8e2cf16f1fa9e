/** The §11 rates variables: defaults, overrides, and refusals that name the variable. */
import { describe, expect, it } from 'vitest';
import { ratesConfigFromEnv } from '../../../server/adapters/rates/config.js';

describe('rates configuration', () => {
  it('defaults: the three public providers, refresh 30 s, quorum 2, age 120 s', () => {
    expect(ratesConfigFromEnv({})).toEqual({
      sources: [
        { name: 'coinbase', baseUrl: 'https://api.coinbase.com' },
        { name: 'kraken', baseUrl: 'https://api.kraken.com' },
        { name: 'coingecko', baseUrl: 'https://api.coingecko.com' },
      ],
      refreshS: 30,
      minSources: 2,
      maxAgeS: 120,
    });
  });

  it('sources and base URLs overridable; numbers read', () => {
    const c = ratesConfigFromEnv({
      KASSA_RATE_SOURCES: ' Kraken , coinbase',
      KASSA_RATES_KRAKEN_URL: 'http://127.0.0.1:9001/',
      KASSA_RATES_REFRESH_S: '10',
      KASSA_RATES_MIN_SOURCES: '2',
      KASSA_RATES_MAX_AGE_S: '60',
    });
    expect(c.sources).toEqual([
      { name: 'kraken', baseUrl: 'http://127.0.0.1:9001' },
      { name: 'coinbase', baseUrl: 'https://api.coinbase.com' },
    ]);
    expect([c.refreshS, c.minSources, c.maxAgeS]).toEqual([10, 2, 60]);
  });

  it('refuses bad values, naming the variable', () => {
    expect(() => ratesConfigFromEnv({ KASSA_RATE_SOURCES: 'coinbase,binance' })).toThrow(/^KASSA_RATE_SOURCES: unknown source "binance"/);
    expect(() => ratesConfigFromEnv({ KASSA_RATE_SOURCES: 'kraken,kraken' })).toThrow(/KASSA_RATE_SOURCES: names a source twice/);
    expect(() => ratesConfigFromEnv({ KASSA_RATE_SOURCES: 'kraken' })).toThrow(/^KASSA_RATES_MIN_SOURCES: is 2 but only 1 source/);
    expect(() => ratesConfigFromEnv({ KASSA_RATES_COINBASE_URL: 'ftp://x' })).toThrow(/^KASSA_RATES_COINBASE_URL: /);
    expect(() => ratesConfigFromEnv({ KASSA_RATES_REFRESH_S: '0' })).toThrow(/^KASSA_RATES_REFRESH_S: /);
    expect(() => ratesConfigFromEnv({ KASSA_RATES_MAX_AGE_S: 'soon' })).toThrow(/^KASSA_RATES_MAX_AGE_S: /);
  });

  it('a single source with quorum 1 is allowed (explicit choice)', () => {
    expect(ratesConfigFromEnv({ KASSA_RATE_SOURCES: 'coingecko', KASSA_RATES_MIN_SOURCES: '1' }).minSources).toBe(1);
  });
});
