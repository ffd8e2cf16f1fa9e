/**
 * What money needs from outside: exchange rates. Pricing and valuation ask a
 * `RatesPort`; the composition root picks the source (the sandbox table, or
 * live market sources behind their quorum).
 */
import type { PricedCurrency } from './catalog.js';
import type { Dec } from './decimal.js';

/** What a rate stands on: the sources that agreed on it and the time of its oldest quote. */
export type RateProvenance = { sources: string[]; at: Date };

export interface RatesPort {
  /** Units of `to` worth one unit of `from`, at full precision. */
  rate(from: PricedCurrency, to: PricedCurrency, at: Date): Promise<Dec>;
  /** The rate with what it stands on, stored with the payment it priced. */
  provenance(from: PricedCurrency, to: PricedCurrency, at: Date): Promise<{ rate: Dec } & RateProvenance>;
}
