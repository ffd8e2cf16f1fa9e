/**
 * money: the spec's tables as data (currencies, networks, statuses), exact
 * decimals and the rounding rule, fee formulas, valuation, and the rates port.
 */
export * from './catalog.js';
export * from './decimal.js';
export * from './fees.rules.js';
export * from './metadata.schema.js';
export * from './valuation.js';
export type { RatesPort, RateProvenance } from './ports.js';
