/**
 * The network families joined: every network Kassa runs on and its rules.
 * The list of networks, the currency/network tables of the money catalog
 * (deposit and payout networks, fees, tag networks) and the token contracts
 * are all derived from here, so a network is described once.
 */
import { EVM_NETWORKS } from './evm.rules.js';
import type { NetworkRules } from './family.rules.js';
import { SOLANA_NETWORKS } from './solana.rules.js';
import { STELLAR_NETWORKS } from './stellar.rules.js';
import { TRON_NETWORKS } from './tron.rules.js';
import { UTXO_NETWORKS } from './utxo.rules.js';
import { XRP_NETWORKS } from './xrp.rules.js';

export { eip681Uri } from './evm.rules.js';
export type { AddressValidation, CarriedCurrency, DepositAddress, NetworkRules, PaymentUriInput } from './family.rules.js';

/** In the spec's order of networks (BCH, BTC, LTC, XLM, XRP, ETH, BSC, SOL, TRX). */
const ALL = {
  ...UTXO_NETWORKS,
  ...STELLAR_NETWORKS,
  ...XRP_NETWORKS,
  ...EVM_NETWORKS,
  ...SOLANA_NETWORKS,
  ...TRON_NETWORKS,
} satisfies Record<string, NetworkRules>;

export type Network = keyof typeof ALL;

export const NETWORK_RULES: Readonly<Record<Network, NetworkRules>> = ALL;

export const NETWORKS = Object.keys(ALL) as readonly Network[];

/** Token contracts (and their on-chain decimals) on networks where the currency is not native. */
export const TOKEN_CONTRACTS: Partial<Record<Network, Record<string, { contract: string; decimals: number }>>> = Object.fromEntries(
  NETWORKS.flatMap((network) => {
    const tokens = Object.entries(NETWORK_RULES[network].currencies).flatMap(([currency, c]) => (c.token ? [[currency, c.token] as const] : []));
    return tokens.length ? [[network, Object.fromEntries(tokens)]] : [];
  }),
);
