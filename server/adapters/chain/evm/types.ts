/**
 * The EVM engine's own small types. They mirror what the app consumes today
 * (a deposit report, a payout request), so a ChainPort adapter maps them 1:1;
 * nothing here imports Kassa's other code.
 */

/** The spec's EVM networks. */
export type EvmNetwork = 'ETH' | 'BSC';

/** Native coin of each network (the spec's currency codes). */
export const NATIVE_CURRENCY: Record<EvmNetwork, string> = { ETH: 'ETH', BSC: 'BNB' };

export type DepositState = 'SEEN' | 'CONFIRMED' | 'DROPPED';

/** One transfer to a watched address, as the app's deposit ingestion takes it. */
export type DepositReport = {
  network: EvmNetwork;
  txHash: `0x${string}`;
  /** The log index for a token transfer, 0 for a native transfer. */
  outputIndex: number;
  fromAddress: `0x${string}`;
  toAddress: `0x${string}`;
  currency: string;
  /** Decimal string in whole units (e.g. "12.5" USDT), exact. */
  amount: string;
  state: DepositState;
  confirmations: number;
  /** What the sender paid the network in `currency` (native: gas used × price; a token: 0); absent when not known. */
  onChainFee?: string;
};

/** Where reports go; must be idempotent per (network, txHash, outputIndex, state). */
export type DepositSink = (report: DepositReport) => Promise<unknown>;

/** A configured token contract. */
export type TokenContract = { currency: string; address: `0x${string}` };

export type PayoutRequest = {
  /** Idempotency key: the same id never produces a second transaction. */
  id: string;
  network: EvmNetwork;
  currency: string;
  toAddress: string;
  /** Decimal string in whole units. */
  amount: string;
};

/** A payout is either on its way (a real hash) or held for lack of treasury funds. */
export type PayoutResult =
  | { status: 'SENT'; txHash: `0x${string}`; nonce: number }
  | { status: 'MINED'; txHash: `0x${string}`; nonce: number; blockNumber: bigint; success: boolean }
  | HeldResult;

export type HeldResult = {
  status: 'HELD';
  reason: 'INSUFFICIENT_FUNDS';
  /** What is missing, in base units of the currency named. */
  currency: string;
  needed: bigint;
  available: bigint;
};

/** A payout as its withdrawal or refund sees it: still on its way, or final at the depth asked for. */
export type PayoutSettlement =
  | { state: 'PENDING' }
  | { state: 'FINAL'; txHash: `0x${string}`; success: boolean; at: Date };
