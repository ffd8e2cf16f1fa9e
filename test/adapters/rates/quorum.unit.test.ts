/** The quorum, outlier, pivot and peg rules of quorum.rules.ts, as pure functions. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRYPTO, FIAT, RateDecimal, type Crypto, type Fiat } from '../../../server/adapters/rates/currencies.js';
import type { Quote } from '../../../server/adapters/rates/quote.js';
import {
  DEFAULT_POLICY,
  median,
  pairQuorum,
  peggedRate,
  RatesUnavailable,
  resolveRate,
  type QuorumPolicy,
} from '../../../server/adapters/rates/quorum.rules.js';

const NOW = new Date('2026-11-23T12:00:00.000Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const q = (source: string, base: Crypto, quote: Fiat, price: string, ageS = 10): Quote => ({ source, base, quote, price, at: ago(ageS) });
const P = DEFAULT_POLICY;
const D = (s: string | number) => new RateDecimal(s);
const unavailable = (f: () => unknown): RatesUnavailable => {
  try {
    f();
  } catch (e) {
    if (e instanceof RatesUnavailable) return e;
    throw e;
  }
  throw new Error('expected RatesUnavailable');
};

describe('currencies', () => {
  it('are the 40 fiats and 12 cryptos of the catalog', () => {
    expect(FIAT).toHaveLength(40);
    expect([...CRYPTO]).toEqual(['BCH', 'BNB', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'TRX', 'USDC', 'USDT', 'XLM', 'XRP']);
  });
});

describe('median', () => {
  it('odd count: the middle value; even: the mean of the two middle values', () => {
    expect(median([D(3), D(1), D(2)]).toString()).toBe('2');
    expect(median([D(4), D(1), D(3), D(2)]).toString()).toBe('2.5');
    expect(median([D('0.1'), D('0.2')]).toString()).toBe('0.15');
  });
});

describe('pair quorum', () => {
  it('the rate is the median of the fresh quotes, all sources recorded', () => {
    const r = pairQuorum([q('coinbase', 'BTC', 'EUR', '57000'), q('kraken', 'BTC', 'EUR', '57100')], 'BTC', 'EUR', NOW, P);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.pair.rate.toString()).toBe('57050');
    expect(r.pair.used.map((u) => u.source)).toEqual(['coinbase', 'kraken']);
  });

  it('drops a quote more than 2 % from the first median, then takes the median again', () => {
    const r = pairQuorum(
      [q('a', 'BTC', 'EUR', '100'), q('b', 'BTC', 'EUR', '101'), q('c', 'BTC', 'EUR', '110')],
      'BTC',
      'EUR',
      NOW,
      P,
    );
    expect(r.ok && r.pair.rate.toString()).toBe('100.5'); // median(100, 101), not 101
    expect(r.ok && r.pair.dropped.map((d) => d.source)).toEqual(['c']);
  });

  it('a quote exactly 2 % away is kept; a hair beyond is dropped', () => {
    const kept = pairQuorum([q('a', 'ETH', 'USD', '100'), q('b', 'ETH', 'USD', '100'), q('c', 'ETH', 'USD', '102')], 'ETH', 'USD', NOW, P);
    expect(kept.ok && kept.pair.used).toHaveLength(3);
    const dropped = pairQuorum(
      [q('a', 'ETH', 'USD', '100'), q('b', 'ETH', 'USD', '100'), q('c', 'ETH', 'USD', '102.0000001')],
      'ETH',
      'USD',
      NOW,
      P,
    );
    expect(dropped.ok && dropped.pair.used.map((u) => u.source)).toEqual(['a', 'b']);
    expect(dropped.ok && dropped.pair.rate.toString()).toBe('100');
  });

  it('two sources agree within 4 % of their mean; beyond, neither is trusted (disagreement)', () => {
    const close = pairQuorum([q('a', 'BTC', 'EUR', '100'), q('b', 'BTC', 'EUR', '104')], 'BTC', 'EUR', NOW, P);
    expect(close.ok && close.pair.rate.toString()).toBe('102');
    const apart = pairQuorum([q('a', 'BTC', 'EUR', '100'), q('b', 'BTC', 'EUR', '104.2')], 'BTC', 'EUR', NOW, P);
    expect(apart).toEqual({ ok: false, base: 'BTC', quote: 'EUR', reason: 'disagreement', fresh: 2 });
  });

  it('a quote exactly maxAgeS old is stale; one millisecond younger is fresh', () => {
    const stale = [q('a', 'BTC', 'EUR', '100', 10), { ...q('b', 'BTC', 'EUR', '100'), at: ago(120) }];
    expect(pairQuorum(stale, 'BTC', 'EUR', NOW, P)).toMatchObject({ ok: false, reason: 'too_few_fresh', fresh: 1 });
    const fresh = [q('a', 'BTC', 'EUR', '100', 10), { ...q('b', 'BTC', 'EUR', '100'), at: new Date(ago(120).getTime() + 1) }];
    expect(pairQuorum(fresh, 'BTC', 'EUR', NOW, P).ok).toBe(true);
  });

  it('tolerates 5 s of clock skew into the future, not more', () => {
    const inFuture = (s: number) => ({ ...q('b', 'BTC', 'EUR', '100'), at: new Date(NOW.getTime() + s * 1000) });
    expect(pairQuorum([q('a', 'BTC', 'EUR', '100'), inFuture(5)], 'BTC', 'EUR', NOW, P).ok).toBe(true);
    expect(pairQuorum([q('a', 'BTC', 'EUR', '100'), inFuture(6)], 'BTC', 'EUR', NOW, P).ok).toBe(false);
  });

  it('one vote per source: its latest quote', () => {
    const r = pairQuorum(
      [q('a', 'BTC', 'EUR', '90', 50), q('a', 'BTC', 'EUR', '100', 5), q('b', 'BTC', 'EUR', '101', 5)],
      'BTC',
      'EUR',
      NOW,
      P,
    );
    expect(r.ok && r.pair.rate.toString()).toBe('100.5');
    expect(r.ok && r.pair.used).toHaveLength(2);
    // The same source twice is one source: no quorum of two.
    expect(pairQuorum([q('a', 'BTC', 'EUR', '100', 5), q('a', 'BTC', 'EUR', '100', 6)], 'BTC', 'EUR', NOW, P).ok).toBe(false);
  });

  it('minSources 3 needs three agreeing sources; the rate time is the oldest quote used', () => {
    const policy: QuorumPolicy = { ...P, minSources: 3 };
    const quotes = [q('a', 'LTC', 'EUR', '80', 30), q('b', 'LTC', 'EUR', '80.4', 10), q('c', 'LTC', 'EUR', '80.2', 20)];
    const r = pairQuorum(quotes, 'LTC', 'EUR', NOW, policy);
    expect(r.ok && r.pair.rate.toString()).toBe('80.2');
    expect(r.ok && r.pair.at).toEqual(ago(30));
    expect(pairQuorum(quotes.slice(0, 2), 'LTC', 'EUR', NOW, policy).ok).toBe(false);
  });

  it('property: the rate lies within the kept quotes, ignores their order, and scales with them', () => {
    const price = fc.integer({ min: 9_950_000, max: 10_050_000 }).map((n) => D(n).div(100_000)); // 99.5–100.5
    fc.assert(
      fc.property(fc.array(price, { minLength: 2, maxLength: 7 }), fc.integer({ min: 1, max: 1000 }), (prices, k) => {
        const quotes = prices.map((p, i) => q(`s${i}`, 'BTC', 'USD', p.toString()));
        const r = pairQuorum(quotes, 'BTC', 'USD', NOW, P);
        // Between 99.5 and 100.5 no two quotes are more than 1.01 % apart: all are kept.
        if (!r.ok) return false;
        const min = prices.reduce((a, b) => (a.lt(b) ? a : b));
        const max = prices.reduce((a, b) => (a.gt(b) ? a : b));
        const reversed = pairQuorum([...quotes].reverse(), 'BTC', 'USD', NOW, P);
        const scaled = pairQuorum(quotes.map((x) => ({ ...x, price: D(x.price).mul(k).toString() })), 'BTC', 'USD', NOW, P);
        return (
          r.pair.rate.gte(min) &&
          r.pair.rate.lte(max) &&
          r.pair.used.length === prices.length &&
          reversed.ok &&
          reversed.pair.rate.eq(r.pair.rate) &&
          scaled.ok &&
          scaled.pair.rate.eq(r.pair.rate.mul(k))
        );
      }),
    );
  });

  it('property: a single wild source among agreeing ones never moves the rate beyond them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 6 }),
        fc.oneof(fc.integer({ min: 200, max: 10_000 }), fc.integer({ min: 1, max: 50 })),
        (agreeing, wild) => {
          const quotes = [...Array.from({ length: agreeing }, (_, i) => q(`s${i}`, 'ETH', 'EUR', String(100 + (i % 2)))), q('wild', 'ETH', 'EUR', String(wild))];
          const r = pairQuorum(quotes, 'ETH', 'EUR', NOW, P);
          return r.ok && r.pair.rate.gte(100) && r.pair.rate.lte(101) && r.pair.dropped.map((d) => d.source).join() === 'wild';
        },
      ),
    );
  });
});

describe('pivot rule', () => {
  const market = [
    q('a', 'BTC', 'EUR', '50000'),
    q('b', 'BTC', 'EUR', '50000'),
    q('a', 'BTC', 'USD', '55000'),
    q('b', 'BTC', 'USD', '55000'),
    q('a', 'ETH', 'USD', '2750'),
    q('b', 'ETH', 'USD', '2750'),
    q('a', 'ETH', 'EUR', '2500'),
    q('b', 'ETH', 'EUR', '2500'),
    q('a', 'BTC', 'QAR', '200000'), // QAR: one source only
  ];

  it('same currency is exactly 1 with no sources', () => {
    const r = resolveRate([], 'EUR', 'EUR', NOW, P);
    expect(r.rate.toString()).toBe('1');
    expect(r.legs).toEqual([]);
  });

  it('crypto → fiat directly; fiat → crypto as its inverse', () => {
    expect(resolveRate(market, 'BTC', 'EUR', NOW, P).rate.toString()).toBe('50000');
    const inv = resolveRate(market, 'EUR', 'BTC', NOW, P);
    expect(inv.rate.toString()).toBe('0.00002');
    expect(inv.pivot).toBeNull();
  });

  it('crypto → crypto through USD first: ETH→BTC = (ETH/USD)/(BTC/USD)', () => {
    const r = resolveRate(market, 'ETH', 'BTC', NOW, P);
    expect(r.pivot).toBe('USD');
    expect(r.rate.toString()).toBe('0.05');
    expect(r.legs.map((l) => `${l.base}/${l.quote}`)).toEqual(['ETH/USD', 'BTC/USD']);
  });

  it('crypto → crypto falls back to EUR when a USD leg has no quorum', () => {
    const noEthUsd = market.filter((x) => !(x.base === 'ETH' && x.quote === 'USD' && x.source === 'b'));
    const r = resolveRate(noEthUsd, 'ETH', 'BTC', NOW, P);
    expect(r.pivot).toBe('EUR');
    expect(r.rate.toString()).toBe('0.05');
  });

  it('fiat → fiat through BTC: EUR→USD = (BTC/USD)/(BTC/EUR), then ETH when BTC lacks a leg', () => {
    const r = resolveRate(market, 'EUR', 'USD', NOW, P);
    expect(r.pivot).toBe('BTC');
    expect(r.rate.toString()).toBe('1.1');
    const noBtcEur = market.filter((x) => !(x.base === 'BTC' && x.quote === 'EUR'));
    const viaEth = resolveRate(noBtcEur, 'EUR', 'USD', NOW, P);
    expect(viaEth.pivot).toBe('ETH');
    expect(viaEth.rate.toString()).toBe('1.1');
  });

  it('no quorum on any path → RatesUnavailable with retry-after and what failed', () => {
    const e = unavailable(() => resolveRate(market, 'USD', 'QAR', NOW, { ...P, retryAfterS: 30 }));
    expect(e.code).toBe('RATES_UNAVAILABLE');
    expect(e.retryAfterS).toBe(30);
    expect(e.failures).toEqual([
      { base: 'BTC', quote: 'QAR', reason: 'too_few_fresh', fresh: 1 },
      { base: 'ETH', quote: 'QAR', reason: 'too_few_fresh', fresh: 0 },
    ]);
    expect(unavailable(() => resolveRate(market, 'BTC', 'QAR', NOW, P)).failures).toHaveLength(1);
    expect(unavailable(() => resolveRate(market, 'BTC', 'XYZ' as Fiat, NOW, P)).failures[0]!.reason).toBe('unknown_currency');
  });

  it('stale quotes never price: everything older than maxAgeS → RatesUnavailable', () => {
    const old = market.map((x) => ({ ...x, at: ago(121) }));
    expect(unavailable(() => resolveRate(old, 'BTC', 'EUR', NOW, P)).failures[0]).toMatchObject({ reason: 'too_few_fresh', fresh: 0 });
  });
});

describe('stablecoin peg', () => {
  const quotes = [
    q('a', 'USDT', 'EUR', '0.9195'),
    q('b', 'USDT', 'EUR', '0.9197'),
    q('a', 'USDT', 'USD', '0.9990'),
    q('b', 'USDT', 'USD', '0.9994'),
    q('a', 'BTC', 'EUR', '50000'),
    q('b', 'BTC', 'EUR', '50000'),
    q('a', 'BTC', 'USD', '55000'),
    q('b', 'BTC', 'USD', '55000'),
  ];

  it('USDT in USD: pegged exactly 1, market beside it', () => {
    const r = peggedRate(quotes, 'USDT', 'USD', NOW, P);
    expect(r.pegged.rate.toString()).toBe('1');
    expect(r.market.rate.toString()).toBe('0.9992');
  });

  it('USDT in EUR: pegged = the USD→EUR rate, market = USDT/EUR', () => {
    const r = peggedRate(quotes, 'USDT', 'EUR', NOW, P);
    expect(r.pegged.rate.toFixed(10)).toBe(D(50000).div(55000).toFixed(10));
    expect(r.market.rate.toString()).toBe('0.9196');
  });

  it('no market quorum → RatesUnavailable (the depeg loss needs it)', () => {
    expect(() => peggedRate(quotes, 'USDC', 'EUR', NOW, P)).toThrow(RatesUnavailable);
  });
});
