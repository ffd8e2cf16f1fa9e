/**
 * Which networks (and which currencies on them) this installation offers,
 * where its deposit addresses come from and which addresses it accepts as
 * destinations. In sandbox: all nine networks, addresses from the master
 * key, mainnet address formats. Live (CONTRACT §10): only the networks whose
 * node is configured, addresses from each network's xpub, and the address
 * formats of the chain the node reports (e.g. `rltc1…` on a Litecoin regtest).
 * The composition root builds it; modules only ask it.
 */
import type { Database } from '../../../db/client.js';
import type { PlatformDeps } from '../../platform/runtime.js';
import type { MasterKey } from '../../platform/secrets.js';
import { KassaError, unprocessable } from '../../platform/errors.js';
import { DEPOSIT_NETWORKS, NETWORKS, isCrypto, type Network, type RatesPort } from '../money/index.js';
import { validateAddress, type AddressValidation } from './addresses.rules.js';
import { depositAddress, type DepositAddress } from './deposit-address.js';
import type { PaymentUriInput } from './families/index.js';
import { paymentUri } from './payment-uri.rules.js';

/** What a module that prices money and moves it on the networks offered is given (payments, withdrawals). */
export type NetworkDeps = PlatformDeps & {
  database: Database;
  rates: RatesPort;
  /** The networks offered, their deposit addresses and destination formats (sandbox or live). */
  networks: NetworkAccess;
};

export type NetworkAccess = {
  /** 'sandbox' or 'live': the checkout shows TEST MODE for the first. */
  readonly mode: 'sandbox' | 'live';
  /** The networks offered, in the spec's order. */
  readonly enabled: readonly Network[];
  /**
   * Live: whether `network` is configured, with `currency` among what it is configured to take (any,
   * without a currency), but its node has not answered since the process started. Kassa tries it again
   * in the background; meanwhile a payment or withdrawal on it is 503 NETWORK_UNAVAILABLE, while a
   * currency the network is not configured for stays 422, as it will be once the node answers.
   */
  waitsFor?(currency: string | null | undefined, network: string): boolean;
  /** Whether `currency` may be used on `network` (its node is configured and, for tokens, the contract is). */
  offers(currency: string, network: Network): boolean;
  /** The PostgreSQL sequence numbering the network's deposit addresses. */
  addressSequence(network: Network): string;
  /** Deposit address (and tag) number `index` of the network; no I/O. */
  depositAddress(network: Network, index: number): DepositAddress;
  /** An address of the network's chain (the node's chain when live). */
  validateAddress(network: Network, address: string): AddressValidation;
  /**
   * The payment URI the checkout shows as a QR code, for the chain the installation serves (live EVM: the
   * node's chain id and token contracts); null for a network it does not serve.
   */
  paymentUri(network: Network, p: PaymentUriInput): string | null;
};

/** One numbering for every network (the sandbox, and ETH/BSC live: one xpub, so never one address twice). */
export const SHARED_ADDRESS_SEQUENCE = 'deposit_address_index';

/** The sandbox: every network and currency, addresses from the master key, mainnet formats. */
export function sandboxNetworkAccess(masterKey: MasterKey): NetworkAccess {
  return {
    mode: 'sandbox',
    enabled: NETWORKS,
    offers: () => true,
    addressSequence: () => SHARED_ADDRESS_SEQUENCE,
    depositAddress: (network, index) => depositAddress(masterKey, network, index),
    validateAddress,
    paymentUri: (network, p) => paymentUri({ network, ...p }),
  };
}

/** 422 NETWORK_NOT_ENABLED unless the installation offers `currency` on `network`. */
export function assertOffered(access: NetworkAccess, currency: string | null | undefined, network: string, field = 'network'): void {
  const known = (NETWORKS as readonly string[]).includes(network);
  if (known && access.enabled.includes(network as Network) && (!currency || access.offers(currency, network as Network))) return;
  if (access.waitsFor?.(currency, network)) {
    throw new KassaError(503, 'NETWORK_UNAVAILABLE', `${network}'s node has not answered since Kassa started; it is tried again every 10 s. Retry later.`, [], {
      'retry-after': '10',
    });
  }
  const networkServed = known && (access.enabled.includes(network as Network) || access.waitsFor?.(null, network));
  const what = currency && networkServed ? `${currency} on ${network} is` : `Network ${network} is`;
  const enabled = access.enabled.length ? access.enabled.join(', ') : 'none';
  throw unprocessable('NETWORK_NOT_ENABLED', `${what} not enabled on this installation (enabled networks: ${enabled}).`, [
    { field, message: `enabled: ${enabled}` },
  ]);
}

/** The catalog's deposit pairs this installation offers. */
export function offeredDepositPairs(access: NetworkAccess): { currency: string; network: Network }[] {
  const out: { currency: string; network: Network }[] = [];
  for (const [currency, networks] of Object.entries(DEPOSIT_NETWORKS)) {
    for (const network of networks) {
      if (isCrypto(currency) && access.enabled.includes(network) && access.offers(currency, network)) out.push({ currency, network });
    }
  }
  return out;
}

/** A live network's state for /ready and /metrics: the scanner's cursor, the node's tip and the lag between them. */
export type ChainHealth = {
  /** The node answered just now. */
  ok: boolean;
  /** The scanner's cursor: the highest block scanned. */
  height: number | null;
  /** The node's tip, when it answered. */
  tip: number | null;
  lag: number | null;
  lastScanAt: Date | null;
  /** Null while not known (a network whose node has not answered since start). */
  reorgs: number | null;
  /**
   * Deposits credited and then reorganised off the best chain (deeper than the network's confirmations) and
   * not back in a block: the ledger still holds their credit, so an operator must review them (the engines'
   * `reorged_after_credit` rows). One mined again leaves the count.
   */
  creditedOffChain: number | null;
  error?: string;
};
