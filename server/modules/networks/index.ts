/**
 * networks: one module per network family (families/: utxo, evm, tron,
 * solana, xrp, stellar) holding its address rules and derivation, payment
 * URIs and transaction hash formats, and the facades over them by network;
 * Kassa's deposit addresses; what a chain reports (DepositReport). The
 * ChainPort itself is not here: it is reachable only from jobs (ports.ts).
 */
export { NETWORK_RULES, eip681Uri, type NetworkRules, type CarriedCurrency, type PaymentUriInput } from './families/index.js';
export { b58checkDecode } from './families/keys.rules.js';
export * from './address-validation.schema.js';
export * from './addresses.rules.js';
export * from './payment-uri.rules.js';
export * from './tx-hash.rules.js';
export * from './deposit-address.js';
export * from './network-access.js';
export type { ChainState, DepositReport, DepositSink, Broadcast, BroadcastResult } from './ports.js';
