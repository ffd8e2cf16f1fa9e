/**
 * BTC, LTC and BCH behind the chain port: the UTXO engine (../utxo) wired
 * to Kassa. The chain (main, test, regtest) and its address prefixes follow
 * the node's `getblockchaininfo`; payouts are built and signed by the signer
 * role from the outputs the scanner tracks (deposits are spent directly).
 */
import type { Sql } from 'postgres';
import { paymentUri } from '../../../modules/networks/index.js';
import type { Broadcast, BroadcastResult } from '../../../modules/networks/ports.js';
import { InsufficientFundsError, createUtxoEngine, type PayoutSigner } from '../utxo/index.js';
import { PayoutHeldError, type LiveChain, type LiveSink } from './live-chain.js';
import type { UtxoNetworkConfig } from './live-config.js';
import { highestAssignedIndex } from './watched-addresses.js';

export async function openUtxoChain(
  config: UtxoNetworkConfig,
  options: { sql: Sql; sink: LiveSink; signer?: PayoutSigner; rpcTimeoutMs?: number },
): Promise<LiveChain> {
  const { network } = config;
  // Each UTXO network numbers its own addresses: its xpub's /0/i stay dense, as a wallet restoring it expects.
  const addressSequence = `deposit_address_index_${network.toLowerCase()}`;
  const engine = await createUtxoEngine({
    network,
    rpcUrl: config.rpcUrl,
    xpub: config.xpub,
    confirmations: config.confirmations,
    fallbackFeeRate: config.fallbackFeeRate,
    sql: options.sql,
    sink: (report) => options.sink({ ...report, destinationTag: null }),
    signer: options.signer,
    highestAssignedIndex: () => highestAssignedIndex(options.sql, addressSequence),
    rpcTimeoutMs: options.rpcTimeoutMs,
  });
  const currency = network; // BTC, LTC and BCH are their own coins
  return {
    network,
    confirmations: engine.confirmations,
    addressSequence,
    port: {
      network,
      async broadcast(tx: Broadcast): Promise<BroadcastResult> {
        try {
          const sent = await engine.payout({ id: tx.id, network, currency: tx.currency, toAddress: tx.toAddress, amount: tx.amount });
          return { txHash: sent.txHash, confirmedAt: null };
        } catch (error) {
          if (error instanceof InsufficientFundsError) throw new PayoutHeldError(`${network}: ${error.message}; the payout waits`);
          throw error;
        }
      },
    },
    offers: (c) => c === currency,
    depositAddress: (index) => ({ address: engine.depositAddress(index) }),
    validateAddress: (address) =>
      engine.isValidAddress(address)
        ? { valid: true }
        : { valid: false, reason: `not an address of this ${network} node's chain (${engine.params.chain})` },
    // BIP21 names no chain: the address itself is the chain's (`rltc1…` on a regtest).
    paymentUri: (p) => paymentUri({ network, ...p }),
    async scan() {
      await engine.scan();
    },
    health: () => engine.health(),
    async rebroadcast() {
      await engine.tendPending(config.feeBumpAfterS * 1000);
    },
    replacedPayouts: () => engine.replacedPayouts(),
    settlement: (id) => engine.settlement(id),
    async close() {},
  };
}
