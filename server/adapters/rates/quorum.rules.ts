/**
 * From stored quotes to one rate, with no I/O: the quorum, the outlier rule, the pivots and the
 * stablecoin peg. Everything here is exact decimal arithmetic.
 *
 * THE QUORUM RULE, for one pair (crypto `base`, fiat `quote`), at time `now`:
 *  1. Take the latest quote of each source for the pair. It is FRESH when it is younger than
 *     `maxAgeS`: now − at < maxAgeS (a quote exactly maxAgeS old is stale). A quote stamped up
 *     to FUTURE_SKEW_S in the future (another process's clock) counts as age 0; later ones are
 *     ignored.
 *  2. Fewer than `minSources` fresh quotes → no rate (reason `too_few_fresh`).
 *  3. m₀ = median of the fresh prices (an even count takes the mean of the two middle ones).
 *  4. Drop every quote with |price − m₀| / m₀ > `maxDeviation` (2 %); a quote exactly 2 % away
 *     is kept.
 *  5. Fewer than `minSources` quotes left → no rate (reason `disagreement`): the sources do not
 *     agree and no side can be trusted. (With two sources this happens when they are more than
 *     4 % of their mean apart, since each is then more than 2 % from the median.)
 *  6. The rate is the median of the quotes left; its time is the OLDEST of them (the age one
 *     can vouch for), and the sources left are recorded with it.
 *
 * THE PIVOT RULE. Sources quote crypto against fiat only. A rate from → to (units of `to` for
 * one `from`) is:
 *  - from = to: 1, no sources.
 *  - crypto → fiat: the pair (from, to) directly.   fiat → crypto: 1 / pair (to, from).
 *  - crypto → crypto: through a fiat P, trying USD, then EUR (the deepest markets, quoted by
 *    every source): the first P where BOTH (from, P) and (to, P) have a quorum gives
 *    rate(from, P) / rate(to, P).
 *  - fiat → fiat: through a crypto C, trying BTC, then ETH (quoted by every source in the most
 *    fiats): the first C where BOTH (C, from) and (C, to) have a quorum gives
 *    rate(C, to) / rate(C, from).
 *  There is no pivot for crypto ↔ fiat: a fiat one source quotes alone (e.g. QAR, on Coinbase
 *  only) has no quorum, and manufacturing one from a single source's cross rate would defeat
 *  the rule. Each leg must stand on its own quorum.
 *
 * Without a rate the answer is RatesUnavailable, carrying the seconds after which asking again
 * may succeed (the next refresh); never a stale or invented rate.
 */
import { isCrypto, isFiat, RateDecimal, type Crypto, type Currency, type Fiat } from './currencies.js';
import type { Quote } from './quote.js';

export const FUTURE_SKEW_S = 5;
export const PIVOT_FIATS: readonly Fiat[] = ['USD', 'EUR'];
export const PIVOT_CRYPTOS: readonly Crypto[] = ['BTC', 'ETH'];

export type QuorumPolicy = {
  /** KASSA_RATES_MIN_SOURCES, default 2. */
  minSources: number;
  /** KASSA_RATES_MAX_AGE_S, default 120. */
  maxAgeS: number;
  /** Largest relative distance from the median a quote may have; default 0.02. */
  maxDeviation: RateDecimal;
  /** Seconds a caller should wait before asking again when there is no rate (the refresh interval). */
  retryAfterS: number;
};

export const DEFAULT_POLICY: QuorumPolicy = {
  minSources: 2,
  maxAgeS: 120,
  maxDeviation: new RateDecimal('0.02'),
  retryAfterS: 30,
};

/** One source's contribution to a rate. */
export type UsedQuote = { source: string; price: string; at: Date };

/** A rate of one (crypto, fiat) pair that met the quorum. */
export type PairRate = {
  base: Crypto;
  quote: Fiat;
  rate: RateDecimal;
  /** The oldest of the quotes used. */
  at: Date;
  used: UsedQuote[];
  /** Fresh quotes dropped as outliers. */
  dropped: UsedQuote[];
};

export type NoQuorumReason = 'too_few_fresh' | 'disagreement';
export type PairOutcome = { ok: true; pair: PairRate } | { ok: false; base: Crypto; quote: Fiat; reason: NoQuorumReason; fresh: number };

/** A rate from → to, with every pair (leg) it was computed from. */
export type Rate = {
  from: Currency;
  to: Currency;
  rate: RateDecimal;
  /** Oldest quote behind the rate; `now` for from = to. */
  at: Date;
  /** The fiat or crypto the rate was crossed through, if any. */
  pivot: Currency | null;
  legs: PairRate[];
};

/** No quorum: pricing must refuse (503 RATES_UNAVAILABLE with Retry-After). */
export class RatesUnavailable extends Error {
  readonly code = 'RATES_UNAVAILABLE';
  constructor(
    readonly from: string,
    readonly to: string,
    readonly retryAfterS: number,
    readonly failures: { base: string; quote: string; reason: NoQuorumReason | 'unknown_currency'; fresh: number }[],
  ) {
    super(
      `no rate ${from}→${to}: ` +
        (failures.map((f) => `${f.base}/${f.quote} ${f.reason}${f.reason === 'unknown_currency' ? '' : ` (${f.fresh} fresh)`}`).join(', ') ||
          'no quorum'),
    );
    this.name = 'RatesUnavailable';
  }
}

/** Median of a non-empty list: the middle value, or the mean of the two middle values. */
export function median(values: readonly RateDecimal[]): RateDecimal {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a.cmp(b));
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : sorted[mid - 1]!.add(sorted[mid]!).div(2);
}

const isFresh = (at: Date, now: Date, maxAgeS: number): boolean => {
  const ageMs = now.getTime() - at.getTime();
  return ageMs < maxAgeS * 1000 && ageMs >= -FUTURE_SKEW_S * 1000;
};

/** Steps 1–6 of the quorum rule for one pair, over any quotes (others are ignored). */
export function pairQuorum(quotes: readonly Quote[], base: Crypto, quote: Fiat, now: Date, policy: QuorumPolicy): PairOutcome {
  const latest = new Map<string, Quote>();
  for (const q of quotes) {
    if (q.base !== base || q.quote !== quote) continue;
    const seen = latest.get(q.source);
    if (!seen || seen.at < q.at) latest.set(q.source, q);
  }
  const fresh = [...latest.values()].filter((q) => isFresh(q.at, now, policy.maxAgeS));
  if (fresh.length < policy.minSources) return { ok: false, base, quote, reason: 'too_few_fresh', fresh: fresh.length };
  const priced = fresh.map((q) => ({ q, price: new RateDecimal(q.price) }));
  const m0 = median(priced.map((p) => p.price));
  const within = (p: RateDecimal) => p.sub(m0).abs().div(m0).lte(policy.maxDeviation);
  const kept = priced.filter((p) => within(p.price));
  const dropped = priced.filter((p) => !within(p.price));
  if (kept.length < policy.minSources) return { ok: false, base, quote, reason: 'disagreement', fresh: fresh.length };
  const used = kept.map((p) => ({ source: p.q.source, price: p.q.price, at: p.q.at })).sort((a, b) => a.source.localeCompare(b.source));
  return {
    ok: true,
    pair: {
      base,
      quote,
      rate: median(kept.map((p) => p.price)),
      at: new Date(Math.min(...kept.map((p) => p.q.at.getTime()))),
      used,
      dropped: dropped.map((p) => ({ source: p.q.source, price: p.q.price, at: p.q.at })),
    },
  };
}

const oldest = (legs: PairRate[]): Date => new Date(Math.min(...legs.map((l) => l.at.getTime())));

/** The rate from → to by the pivot rule; throws RatesUnavailable without a quorum. */
export function resolveRate(quotes: readonly Quote[], from: Currency, to: Currency, now: Date, policy: QuorumPolicy): Rate {
  if (!(isFiat(from) || isCrypto(from)) || !(isFiat(to) || isCrypto(to))) {
    const unknown = [from, to].filter((c) => !isFiat(c) && !isCrypto(c));
    throw new RatesUnavailable(from, to, policy.retryAfterS, unknown.map((c) => ({ base: c, quote: c, reason: 'unknown_currency', fresh: 0 })));
  }
  if (from === to) return { from, to, rate: new RateDecimal(1), at: now, pivot: null, legs: [] };
  const pair = (b: Crypto, q: Fiat) => pairQuorum(quotes, b, q, now, policy);
  const failures: { base: string; quote: string; reason: NoQuorumReason; fresh: number }[] = [];
  const note = (...outcomes: PairOutcome[]) => {
    for (const o of outcomes) if (!o.ok) failures.push({ base: o.base, quote: o.quote, reason: o.reason, fresh: o.fresh });
  };
  const fail = (): never => {
    throw new RatesUnavailable(from, to, policy.retryAfterS, failures);
  };

  if (isCrypto(from) && isFiat(to)) {
    const leg = pair(from, to);
    if (!leg.ok) return note(leg), fail();
    return { from, to, rate: leg.pair.rate, at: leg.pair.at, pivot: null, legs: [leg.pair] };
  }
  if (isFiat(from) && isCrypto(to)) {
    const leg = pair(to, from);
    if (!leg.ok) return note(leg), fail();
    return { from, to, rate: new RateDecimal(1).div(leg.pair.rate), at: leg.pair.at, pivot: null, legs: [leg.pair] };
  }
  if (isCrypto(from) && isCrypto(to)) {
    for (const p of PIVOT_FIATS) {
      const a = pair(from, p);
      const b = pair(to, p);
      if (a.ok && b.ok) {
        const legs = [a.pair, b.pair];
        return { from, to, rate: a.pair.rate.div(b.pair.rate), at: oldest(legs), pivot: p, legs };
      }
      note(a, b);
    }
    return fail();
  }
  // fiat → fiat
  for (const c of PIVOT_CRYPTOS) {
    const a = pair(c, from as Fiat);
    const b = pair(c, to as Fiat);
    if (a.ok && b.ok) {
      const legs = [a.pair, b.pair];
      return { from, to, rate: b.pair.rate.div(a.pair.rate), at: oldest(legs), pivot: c, legs };
    }
    note(a, b);
  }
  return fail();
}

export const STABLECOINS = ['USDT', 'USDC'] as const;
export type Stablecoin = (typeof STABLECOINS)[number];
export const isStablecoin = (code: string): code is Stablecoin => (STABLECOINS as readonly string[]).includes(code);

/** A stablecoin's value in `to`: at its 1:1 USD peg, and at market, side by side. */
export type PeggedRate = {
  stable: Stablecoin;
  to: Currency;
  /** Units of `to` worth one USD (1 when `to` is USD): what the depeg-loss fields value at. */
  pegged: Rate;
  /** The stablecoin's own market rate in `to`. */
  market: Rate;
};

/**
 * THE PEG RULE: one USDT or USDC is worth exactly one USD, so its pegged value in `to` is the
 * rate USD → to (by the rules above; exactly 1 for USD). The market rate stable → to is
 * computed beside it, and both must have a quorum: the depeg loss needs both.
 */
export function peggedRate(quotes: readonly Quote[], stable: Stablecoin, to: Currency, now: Date, policy: QuorumPolicy): PeggedRate {
  const pegged = resolveRate(quotes, 'USD', to, now, policy);
  const market = resolveRate(quotes, stable, to, now, policy);
  return { stable, to, pegged, market };
}
