/**
 * The scanner's pure rules: confirmation depth, block ranges for
 * `eth_getLogs`, which transactions and logs are deposits, and what a
 * deposit's next state is. No I/O: `scanner.ts` feeds them what the node said.
 */
import { formatUnits, getAddress, type Hex } from 'viem';

/** As nodes count them: the block holding the transaction is the first confirmation. */
export function confirmationsAt(tip: bigint, height: bigint): number {
  const depth = tip - height + 1n;
  return depth > 0n ? Number(depth) : 0;
}

/** Credited when `tip − height + 1 ≥ required` (CONTRACT §10). */
export function isDeepEnough(tip: bigint, height: bigint, required: number): boolean {
  return confirmationsAt(tip, height) >= required;
}

/** [from, to] cut into inclusive ranges of at most `cap` blocks (providers cap `eth_getLogs`). */
export function blockRanges(from: bigint, to: bigint, cap: number): Array<[bigint, bigint]> {
  if (cap < 1) throw new Error('range cap must be ≥ 1');
  const ranges: Array<[bigint, bigint]> = [];
  for (let start = from; start <= to; start += BigInt(cap)) {
    const end = start + BigInt(cap) - 1n;
    ranges.push([start, end < to ? end : to]);
  }
  return ranges;
}

/** A transfer found on chain, before it is stored. */
export type Transfer = {
  txHash: Hex;
  outputIndex: number;
  fromAddress: Hex;
  toAddress: Hex;
  currency: string;
  amountBase: bigint;
  /** Exact decimal string in whole units. */
  amount: string;
  blockNumber: bigint;
  blockHash: Hex;
  /**
   * What the sender paid the network, in `currency`: a token transfer's gas is paid in the chain's
   * coin, so none in the token ("0"); a native one's is known from its receipt (set by the scanner).
   */
  onChainFee: string | null;
};

/** What the scanner needs of a block transaction. */
export type BlockTransaction = { hash: Hex; from: Hex; to: Hex | null; value: bigint };

/** What the scanner needs of a `Transfer(from, to, value)` log, decoded. */
export type TransferLog = {
  address: Hex;
  transactionHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hex;
  from: Hex;
  to: Hex;
  value: bigint;
};

/** A log as eth_getLogs returns it (JSON-RPC hex strings). */
export type RpcLog = {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex | null;
  blockHash: Hex | null;
  transactionHash: Hex | null;
  logIndex: Hex | null;
  removed?: boolean;
};

/**
 * A `Transfer(address indexed from, address indexed to, uint256 value)` log
 * decoded by hand, or null when it does not have that shape (3 topics and a
 * 32-byte value, what viem's strict decoding keeps; an ERC-721 Transfer has 4)
 * or is pending. Addresses stay lower-case: only the few to a watched address
 * are checksummed (`tokenTransfers`); viem's decoder checksummed both of every
 * log, a keccak each, half of a scan's CPU (bench scenario 6).
 */
export function decodeTransferLog(log: RpcLog, transferTopic: Hex): TransferLog | null {
  const [topic, from, to] = log.topics;
  if (log.topics.length !== 3 || topic?.toLowerCase() !== transferTopic || log.data.length !== 66) return null;
  if (log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null || log.removed) return null;
  return {
    address: log.address,
    transactionHash: log.transactionHash,
    logIndex: Number(log.logIndex),
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash,
    from: `0x${from!.slice(26).toLowerCase()}`,
    to: `0x${to!.slice(26).toLowerCase()}`,
    value: BigInt(log.data),
  };
}

/** Lower-case lookup: the watched set can be 10,000+ addresses, so a Set, never a topic filter. */
export type WatchedAddresses = { has: (lowercaseAddress: string) => boolean };

const NOBODY: WatchedAddresses = { has: () => false };

/**
 * Native transfers: a transaction whose recipient is watched and that moves
 * value, not sent by Kassa itself (`ownSenders`: the treasury's gas top-ups
 * to deposit addresses are not customer deposits). Whether it succeeded needs its receipt (a reverted call moves
 * nothing): the caller checks that for these few candidates.
 */
export function nativeTransfers(
  block: { number: bigint; hash: Hex; transactions: readonly BlockTransaction[] },
  watched: WatchedAddresses,
  currency: string,
  ownSenders: WatchedAddresses = NOBODY,
): Transfer[] {
  return block.transactions
    .filter((tx) => tx.to !== null && tx.value > 0n && watched.has(tx.to.toLowerCase()) && !ownSenders.has(tx.from.toLowerCase()))
    .map((tx) => ({
      txHash: tx.hash,
      outputIndex: 0,
      fromAddress: getAddress(tx.from),
      toAddress: getAddress(tx.to as Hex),
      currency,
      amountBase: tx.value,
      amount: formatUnits(tx.value, 18),
      blockNumber: block.number,
      blockHash: block.hash,
      onChainFee: null,
    }));
}

/** Token transfers: logs of configured contracts (by lower-case address) to a watched address, scaled by the contract's decimals. */
export function tokenTransfers(
  logs: readonly TransferLog[],
  tokens: ReadonlyMap<string, { currency: string; decimals: number }>,
  watched: WatchedAddresses,
  ownSenders: WatchedAddresses = NOBODY,
): Transfer[] {
  const transfers: Transfer[] = [];
  for (const log of logs) {
    const token = tokens.get(log.address.toLowerCase());
    if (!token || log.value === 0n || !watched.has(log.to.toLowerCase()) || ownSenders.has(log.from.toLowerCase())) continue;
    transfers.push({
      txHash: log.transactionHash,
      outputIndex: log.logIndex,
      fromAddress: getAddress(log.from),
      toAddress: getAddress(log.to),
      currency: token.currency,
      amountBase: log.value,
      amount: formatUnits(log.value, token.decimals),
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      onChainFee: '0',
    });
  }
  return transfers;
}

/** The stored facts about a deposit that decide its next state. */
export type DepositFacts = {
  state: 'SEEN' | 'CONFIRMED' | 'DROPPED';
  blockNumber: bigint | null;
  /** The scanned height at which its block left the best chain (null while on it). */
  orphanedAt: bigint | null;
};

/**
 * The next state of a deposit once the scanner has reached `height`:
 * CONFIRMED at depth (only from SEEN, so never twice), DROPPED when its block
 * left the best chain and it has not reappeared within `dropAfter` blocks.
 */
export function nextState(deposit: DepositFacts, height: bigint, required: number, dropAfter: number): 'CONFIRMED' | 'DROPPED' | null {
  if (deposit.state === 'DROPPED') return null;
  if (deposit.blockNumber === null) {
    if (deposit.orphanedAt !== null && height >= deposit.orphanedAt + BigInt(dropAfter)) return 'DROPPED';
    return null;
  }
  if (deposit.state === 'SEEN' && isDeepEnough(height, deposit.blockNumber, required)) return 'CONFIRMED';
  return null;
}

/** Blocks fetched for one range must form a chain: each one's parent is the one before (else the node moved mid-scan). */
export function isContiguous(blocks: ReadonlyArray<{ hash: Hex; parentHash: Hex }>): boolean {
  return blocks.every((block, i) => i === 0 || block.parentHash === blocks[i - 1]!.hash);
}

/**
 * Balance reconciliation of a deposit address: what its native balance
 * should be from the flows Kassa knows (deposits found by the block scan,
 * Kassa's own transfers to it, what it sent and the fees it paid). A positive
 * remainder is value that arrived unseen — an internal transfer from a
 * contract (a smart-contract wallet paying), which a block scan of
 * transactions cannot see; a negative one is value gone without Kassa.
 */
export function unexplainedNative(flows: {
  balance: bigint;
  deposited: bigint;
  receivedFromKassa: bigint;
  sentValue: bigint;
  feesPaid: bigint;
}): bigint {
  return flows.balance - (flows.deposited + flows.receivedFromKassa - flows.sentValue - flows.feesPaid);
}
