/**
 * What money needs from outside: exchange rates. Pricing and valuation ask a
 * `RatesPort`; the composition root picks the source (the sandbox table, or
 * live market sources behind their quorum).
 */
import type { PricedCurrency } from './catalog.js';
import type { Dec } from './decimal.js';

export interface RatesPort {
  /** Units of `to` worth one unit of `from`, at full precision. */
  rate(from: PricedCurrency, to: PricedCurrency, at: Date): Promise<Dec>;
}
