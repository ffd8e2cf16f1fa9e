/**
 * networks: per network, its address rules and derivation, payment URIs and
 * transaction hash formats; what a chain reports (DepositReport). The
 * ChainPort itself is not here: it is reachable only from jobs (ports.ts).
 */
export * from './address-validation.schema.js';
export * from './addresses.rules.js';
export * from './payment-uri.rules.js';
export * from './tx-hash.rules.js';
export * from './deposit-address.js';
export type { ChainState, DepositReport, DepositSink, Broadcast, BroadcastResult } from './ports.js';
