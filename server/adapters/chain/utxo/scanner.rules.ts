/**
 * The scanner's decisions, as pure functions over plain data (no node, no database).
 */
import type { ChainState } from './types.js';

/** Confirmations as nodes count them: the block holding the transaction is the first. */
export function confirmationsAt(tip: number, blockHeight: number | null): number {
  if (blockHeight === null || blockHeight > tip) return 0;
  return tip - blockHeight + 1;
}

export type OutputFacts = {
  state: ChainState;
  /** On the node's best chain, from the scanner's own block walk. */
  blockHeight: number | null;
  /** In the mempool snapshot of this pass. */
  inMempool: boolean;
  /**
   * The node places the transaction in a block on its best chain that the scanner has not walked
   * yet (mined between the block walk and the mempool read). Only asked when the two above fail.
   */
  inBestChainBlock: boolean;
};

/**
 * The next state of a watched SEEN output. A transaction that is neither mined on the best chain
 * nor in the mempool was double-spent or evicted, so it is DROPPED and never credited. DROPPED
 * moves on only when the transaction is seen again (store.upsertOutputs: SEEN anew); CONFIRMED
 * only by `creditedNextState`.
 */
export function nextState(facts: OutputFacts, tip: number, required: number): ChainState {
  if (facts.state !== 'SEEN') return facts.state;
  if (confirmationsAt(tip, facts.blockHeight) >= required) return 'CONFIRMED';
  if (facts.blockHeight === null && !facts.inMempool && !facts.inBestChainBlock) return 'DROPPED';
  return 'SEEN';
}

/**
 * A credited (CONFIRMED) output that a reorganisation took off the best chain. Back in a block or
 * in the mempool, it stays CONFIRMED (it will be mined again). Gone from both, it is DROPPED only
 * once it has stayed gone while the tip grew by `required` blocks since it was first found gone:
 * its credit is then reversed (CONTRACT §10), so a transaction a busy node only evicted for a
 * while gets the same grace a deposit gets to confirm. `goneSince` is that first tip, or null.
 */
export function creditedNextState(
  facts: Pick<OutputFacts, 'blockHeight' | 'inMempool' | 'inBestChainBlock'> & { goneSince: number | null },
  tip: number,
  required: number,
): { state: 'CONFIRMED' | 'DROPPED'; goneSince: number | null } {
  const gone = facts.blockHeight === null && !facts.inMempool && !facts.inBestChainBlock;
  if (!gone) return { state: 'CONFIRMED', goneSince: null };
  const since = facts.goneSince ?? tip;
  return { state: tip - since >= required ? 'DROPPED' : 'CONFIRMED', goneSince: since };
}

/** Whether the sink must hear about an output again: a new state, or a new depth while SEEN. */
export function needsReport(
  current: { state: ChainState; confirmations: number },
  reported: { state: ChainState | null; confirmations: number | null },
): boolean {
  if (current.state !== reported.state) return true;
  return current.state === 'SEEN' && current.confirmations !== reported.confirmations;
}

/**
 * How many more addresses to derive on one branch so that `gap` unused addresses follow the
 * highest used (or assigned) one — the bound on derived-but-unused addresses (BIP-44's gap limit).
 * `highestUsed` is -1 when none is used; `derived` is how many are derived (indices 0..derived-1).
 */
export function addressesToDerive(derived: number, highestUsed: number, gap: number): number {
  return Math.max(0, highestUsed + 1 + gap - derived);
}

/** inputs − outputs; null when an input's value is unknown (coinbase). */
export function transactionFee(inputs: (bigint | null)[], outputs: bigint[]): bigint | null {
  if (inputs.length === 0 || inputs.some((v) => v === null)) return null;
  const fee = (inputs as bigint[]).reduce((a, b) => a + b, 0n) - outputs.reduce((a, b) => a + b, 0n);
  return fee >= 0n ? fee : null;
}

export type StoredBlock = { height: number; hash: string };

/**
 * The fork point: the highest stored block whose hash the node still has at that height.
 * `stored` is the scanner's recent blocks (any order); `nodeHashAt` the node's hashes at those
 * heights (undefined above the node's tip). Returns null when no stored block is on the node's
 * chain (a reorg deeper than the kept history).
 */
export function forkPoint(stored: StoredBlock[], nodeHashAt: Map<number, string | undefined>): StoredBlock | null {
  const sorted = [...stored].sort((a, b) => b.height - a.height);
  for (const block of sorted) if (nodeHashAt.get(block.height) === block.hash) return block;
  return null;
}
