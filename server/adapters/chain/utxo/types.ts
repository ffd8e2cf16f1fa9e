/**
 * The shapes the engine exchanges with Kassa: the chain port's own
 * (`DepositReport`, `Broadcast`), narrowed to the UTXO networks and with
 * what this family always knows (the sender's fee).
 */
import type { Broadcast, ChainState, DepositReport, PayoutSettlement } from '../../../modules/networks/ports.js';
import type { UtxoNetwork } from './params.js';

export type { ChainState, PayoutSettlement };

/** Amounts are whole coins, exact decimal strings; `fromAddress` is '' for a coinbase or a non-standard script. */
export type UtxoDepositReport = Omit<DepositReport, 'network' | 'destinationTag' | 'dictatedRiskScore' | 'onChainFee'> & {
  network: UtxoNetwork;
  /** What the sender paid: inputs − outputs of the transaction, whole coins. */
  onChainFee: string;
};

/** Kassa's deposit ingestion. Must be idempotent per (network, txHash, outputIndex): reports are at-least-once. */
export type DepositSink = (report: UtxoDepositReport) => Promise<unknown>;

/** A payout (idempotency key `id`: the same id always yields the same transaction), whole coins. */
export type PayoutRequest = Omit<Broadcast, 'network' | 'destinationTag'> & { network: UtxoNetwork };

export type PayoutResult = { txHash: string };
