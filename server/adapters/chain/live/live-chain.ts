/**
 * What the composition root gets for each live network: its ChainPort
 * (payouts, usable only where the signer runs), its address rules, and the
 * work a worker and a signer do for it. The EVM and UTXO families each
 * build one from their engine (evm-chain.ts, utxo-chain.ts).
 */
import type { Network } from '../../../modules/money/index.js';
import type { AddressValidation, ChainHealth, DepositAddress, PaymentUriInput } from '../../../modules/networks/index.js';

export type { ChainHealth, PayoutSettlement };
import type { ChainPort, DepositReport, PayoutSettlement, SweepOutcome, SweepRequest } from '../../../modules/networks/ports.js';


/** A payout the treasury cannot fund yet: it stays waiting (PROCESSING / PENDING) and is retried. */
export class PayoutHeldError extends Error {
  override name = 'PayoutHeldError';
}

export type LiveChain = {
  readonly network: Network;
  readonly confirmations: number;
  /** The sequence numbering this network's deposit addresses. */
  readonly addressSequence: string;
  /** Payouts: signs, stores, broadcasts. Throws outside the signer role. */
  readonly port: ChainPort;
  /** Whether the currency is watched and offered on this network. */
  offers(currency: string): boolean;
  depositAddress(index: number): DepositAddress;
  validateAddress(address: string): AddressValidation;
  /** The checkout's payment URI on the node's chain (its chain id and contracts where the standard names them). */
  paymentUri(p: PaymentUriInput): string;
  /** One scanner pass (worker role); reports go to the sink given at open. */
  scan(): Promise<void>;
  /** Cursor, node tip and lag for /ready and /metrics; `ok: false` when the node does not answer. */
  health(): Promise<ChainHealth>;
  /**
   * Signer role: send every stored, unmined transaction again, same bytes; on EVM, replace a
   * payout stuck at fees below the market (`KASSA_<NET>_FEE_BUMP_AFTER_S`).
   */
  rebroadcast(): Promise<void>;
  /** Signer role: payouts replaced on chain (a fee bump), with the hash each stands for now. */
  replacedPayouts(): Promise<ReplacedTransaction[]>;
  /**
   * Signer role: payout `id` (a broadcast id) final, once its block is the network's confirmations
   * deep on the best chain, or still PENDING (a version reorganised away is sent again).
   */
  settlement(id: string): Promise<PayoutSettlement>;
  close(): Promise<void>;
};

/** A payout whose transaction is now another one (`id`: the broadcast id, e.g. `withdrawal:<uuid>`). */
export type ReplacedTransaction = { id: string; txHash: string };

/** Where live scanners deliver: Kassa's deposit ingestion (and what follows a credit). */
export type LiveSink = (report: DepositReport) => Promise<unknown>;
