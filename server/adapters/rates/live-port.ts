/**
 * The RatesPort over the live market engine (live-rates.ts): rates as the
 * app's `Dec`, and no quorum as 503 RATES_UNAVAILABLE with Retry-After —
 * never a stale or invented rate.
 */
import { Dec, type PricedCurrency, type RatesPort } from '../../modules/money/index.js';
import { KassaError } from '../../platform/errors.js';
import type { LiveRates } from './live-rates.js';
import { RatesUnavailable } from './quorum.rules.js';
import type { Currency } from './currencies.js';

function unavailable(error: RatesUnavailable, from: string, to: string): KassaError {
  return new KassaError(
    503,
    'RATES_UNAVAILABLE',
    `No market rate for ${from}→${to}: fewer than the required sources agree on a fresh quote. Retry in ${error.retryAfterS} s.`,
    [],
    { 'retry-after': String(error.retryAfterS) },
  );
}

export class LiveRatesPort implements RatesPort {
  constructor(readonly live: LiveRates) {}

  async rate(from: PricedCurrency, to: PricedCurrency, at: Date): Promise<Dec> {
    return (await this.provenance(from, to, at)).rate;
  }

  async provenance(from: PricedCurrency, to: PricedCurrency, _at: Date): Promise<{ rate: Dec; sources: string[]; at: Date }> {
    try {
      const quote = await this.live.quote(from as Currency, to as Currency);
      const sources = [...new Set(quote.legs.flatMap((leg) => leg.used.map((u) => u.source)))].sort();
      // decimal.js → the app's Dec through the exact decimal string.
      return { rate: new Dec(quote.rate.toString()), sources, at: quote.at };
    } catch (error) {
      if (error instanceof RatesUnavailable) throw unavailable(error, from, to);
      throw error;
    }
  }
}
