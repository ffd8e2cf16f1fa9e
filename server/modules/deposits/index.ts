/** The deposits module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './deposit-states.rules.js';
export * from './deposit-transitions.js';
export * from './deposit-valuation.rules.js';
export * from './deposit.service.js';
export * from './deposit-sweep.js';
export * from './ports.js';
export * from './payout-replaced.js';
export * from './payout-settled.js';
export * from './refund.service.js';
export * from './simulate-deposit.schema.js';
