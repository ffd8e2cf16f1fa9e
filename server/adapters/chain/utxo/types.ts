/**
 * The shapes the engine exchanges with Kassa. Copied (not imported) from the app's chain port so
 * the engine stays a self-contained library; they map 1:1 onto `DepositReport` and `Broadcast`.
 */
import type { UtxoNetwork } from './params.js';

export type ChainState = 'SEEN' | 'CONFIRMED' | 'DROPPED';

export type UtxoDepositReport = {
  network: UtxoNetwork;
  txHash: string;
  outputIndex: number;
  /** Address of the first input's spent output ('' for a coinbase or a non-standard script). */
  fromAddress: string;
  toAddress: string;
  currency: string;
  /** Whole coins, exact decimal string. */
  amount: string;
  state: ChainState;
  confirmations: number;
  /** What the sender paid: inputs − outputs of the transaction, whole coins. */
  onChainFee: string;
};

/** Kassa's deposit ingestion. Must be idempotent per (network, txHash, outputIndex): reports are at-least-once. */
export type DepositSink = (report: UtxoDepositReport) => Promise<unknown>;

export type PayoutRequest = {
  /** Idempotency key: the same id always yields the same transaction. */
  id: string;
  network: UtxoNetwork;
  currency: string;
  toAddress: string;
  /** Whole coins, decimal string. */
  amount: string;
};

export type PayoutResult = { txHash: string };
