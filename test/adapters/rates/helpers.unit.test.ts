/** Small pure parts of the rate sources: lossless JSON numbers, Retry-After, Kraken pair names, backoff. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePrice } from '../../../server/adapters/rates/currencies.js';
import { parseRetryAfter } from '../../../server/adapters/rates/http.js';
import { KRAKEN_DEFAULT_PAIRS, krakenAltname, krakenResultKeys } from '../../../server/adapters/rates/kraken.js';
import { parseJsonLossless } from '../../../server/adapters/rates/lossless-json.rules.js';
import { nextDelayS } from '../../../server/adapters/rates/refresher.js';

describe('lossless JSON', () => {
  it('numbers arrive as their exact source text; strings are untouched', () => {
    expect(parseJsonLossless('{"a":0.1,"b":[-1.5e-7,123456789012345678901234567890],"c":"x 1.0 \\" 2","d":true,"e":null}')).toEqual({
      a: '0.1',
      b: ['-1.5e-7', '123456789012345678901234567890'],
      c: 'x 1.0 " 2',
      d: true,
      e: null,
    });
    expect(() => parseJsonLossless('{"a":')).toThrow(SyntaxError);
  });

  it('property: any JSON document parses to the same tree, each number as text of the same value', () => {
    const same = (plain: unknown, lossless: unknown): boolean => {
      if (typeof plain === 'number') return typeof lossless === 'string' && Object.is(Number(lossless), plain);
      if (Array.isArray(plain)) return Array.isArray(lossless) && plain.length === lossless.length && plain.every((v, i) => same(v, lossless[i]));
      if (plain !== null && typeof plain === 'object') {
        if (lossless === null || typeof lossless !== 'object' || Array.isArray(lossless)) return false;
        const keys = Object.keys(plain);
        return keys.length === Object.keys(lossless).length && keys.every((k) => same((plain as Record<string, unknown>)[k], (lossless as Record<string, unknown>)[k]));
      }
      return plain === lossless;
    };
    fc.assert(fc.property(fc.json(), (text) => same(JSON.parse(text), parseJsonLossless(text))));
  });
});

describe('parsePrice', () => {
  it('accepts positive plain decimals and exponent forms, nothing else', () => {
    expect(parsePrice('57012.10000')?.toString()).toBe('57012.1');
    expect(parsePrice('1.2e-7')?.toString()).toBe('0.00000012');
    for (const bad of ['0', '-1', 'abc', '', '1.', '.5', 'NaN', 'Infinity', '1,5', null, 5, undefined]) expect(parsePrice(bad)).toBeNull();
  });
});

describe('Retry-After', () => {
  it('seconds or an HTTP date; unreadable → null', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Mon, 23 Nov 2026 12:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Mon, 23 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe('Kraken pair names', () => {
  it('BTC is XBT; legacy, plain and mixed answer keys are all recognised', () => {
    expect(krakenAltname({ base: 'BTC', quote: 'EUR' })).toBe('XBTEUR');
    expect(krakenResultKeys({ base: 'BTC', quote: 'EUR' })).toContain('XXBTZEUR');
    expect(krakenResultKeys({ base: 'ETH', quote: 'USD' })).toContain('XETHZUSD');
    expect(krakenResultKeys({ base: 'USDT', quote: 'USD' })).toContain('USDTZUSD');
    expect(krakenResultKeys({ base: 'SOL', quote: 'EUR' })).toContain('SOLEUR');
  });

  it('the default list has no BNB (not traded on Kraken) and 24 pairs', () => {
    expect(KRAKEN_DEFAULT_PAIRS).toHaveLength(24);
    expect(KRAKEN_DEFAULT_PAIRS.some((p) => p.base === 'BNB')).toBe(false);
  });
});

describe('refresh backoff', () => {
  it('refreshS after success, refreshS × 2ⁿ after n failures up to the cap, at least Retry-After', () => {
    expect(nextDelayS(30, 0, 600, null)).toBe(30);
    expect([1, 2, 3, 4, 5, 6].map((n) => nextDelayS(30, n, 600, null))).toEqual([60, 120, 240, 480, 600, 600]);
    expect(nextDelayS(30, 1, 600, 900)).toBe(900);
    expect(nextDelayS(30, 3, 600, 10)).toBe(240);
  });
});
