import { describe, expect, test } from 'vitest';
import {
  blockRanges,
  confirmationsAt,
  isContiguous,
  isDeepEnough,
  nativeTransfers,
  nextState,
  tokenTransfers,
  unexplainedNative,
  type TransferLog,
} from '../../../server/adapters/chain/evm/scanner.rules.js';

const A = '0x9858effd232b4033e47d90003d41ec34ecaeda94';
const B = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const TOKEN = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;

describe('scanner rules', () => {
  test('the block holding the transaction is the first confirmation', () => {
    expect(confirmationsAt(100n, 100n)).toBe(1);
    expect(confirmationsAt(111n, 100n)).toBe(12);
    expect(confirmationsAt(99n, 100n)).toBe(0);
    expect(isDeepEnough(110n, 100n, 12)).toBe(false);
    expect(isDeepEnough(111n, 100n, 12)).toBe(true);
  });

  test('log ranges respect the cap and cover every block once', () => {
    expect(blockRanges(10n, 10n, 500)).toEqual([[10n, 10n]]);
    expect(blockRanges(1n, 1000n, 500)).toEqual([[1n, 500n], [501n, 1000n]]);
    expect(blockRanges(1n, 1001n, 500)).toEqual([[1n, 500n], [501n, 1000n], [1001n, 1001n]]);
    expect(blockRanges(5n, 4n, 10)).toEqual([]);
    expect(() => blockRanges(1n, 2n, 0)).toThrow();
  });

  test('native: only value to a watched address, EIP-55, exact wei → ETH', () => {
    const watched = new Set([A]);
    const block = {
      number: 7n,
      hash: h(7),
      transactions: [
        { hash: h(1), from: B, to: A, value: 1_500_000_000_000_000_001n },
        { hash: h(2), from: B, to: B, value: 5n },
        { hash: h(3), from: B, to: A, value: 0n },
        { hash: h(4), from: B, to: null, value: 9n },
      ],
    } as const;
    expect(nativeTransfers(block as never, watched, 'ETH')).toEqual([
      {
        txHash: h(1),
        outputIndex: 0,
        fromAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        toAddress: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
        currency: 'ETH',
        amountBase: 1_500_000_000_000_000_001n,
        amount: '1.500000000000000001',
        blockNumber: 7n,
        blockHash: h(7),
        // known from the receipt only, which the scanner reads for these candidates
        onChainFee: null,
      },
    ]);
  });

  test("Kassa's own senders (the treasury's gas top-ups) are not deposits, native or token", () => {
    const block = { number: 7n, hash: h(7), transactions: [{ hash: h(1), from: B, to: A, value: 5n }] };
    expect(nativeTransfers(block as never, new Set([A]), 'ETH', new Set([B]))).toEqual([]);
    expect(nativeTransfers(block as never, new Set([A]), 'ETH', new Set(['0x0000000000000000000000000000000000000001']))).toHaveLength(1);
    const log: TransferLog = { address: TOKEN, transactionHash: h(1), logIndex: 0, blockNumber: 9n, blockHash: h(9), from: B, to: A, value: 1n };
    expect(tokenTransfers([log], new Map([[TOKEN, { currency: 'USDT', decimals: 6 }]]), new Set([A]), new Set([B]))).toEqual([]);
  });

  test('tokens: configured contracts only, to watched addresses only, scaled by decimals, log index as output index', () => {
    const log = (over: Partial<TransferLog>): TransferLog => ({
      address: TOKEN, transactionHash: h(1), logIndex: 3, blockNumber: 9n, blockHash: h(9), from: B, to: A, value: 12_345_678n, ...over,
    });
    const tokens = new Map([[TOKEN, { currency: 'USDT', decimals: 6 }]]);
    const found = tokenTransfers(
      [log({}), log({ logIndex: 4, to: B }), log({ logIndex: 5, address: B }), log({ logIndex: 6, value: 0n }), log({ logIndex: 7, value: 1n })],
      tokens,
      new Set([A]),
    );
    expect(found.map((t) => [t.outputIndex, t.currency, t.amount])).toEqual([[3, 'USDT', '12.345678'], [7, 'USDT', '0.000001']]);
  });

  test('next state: CONFIRMED at depth only from SEEN; DROPPED when detached past the grace; nothing after DROPPED', () => {
    expect(nextState({ state: 'SEEN', blockNumber: 100n, orphanedAt: null }, 101n, 3, 3)).toBeNull();
    expect(nextState({ state: 'SEEN', blockNumber: 100n, orphanedAt: null }, 102n, 3, 3)).toBe('CONFIRMED');
    expect(nextState({ state: 'CONFIRMED', blockNumber: 100n, orphanedAt: null }, 500n, 3, 3)).toBeNull();
    expect(nextState({ state: 'SEEN', blockNumber: null, orphanedAt: 102n }, 104n, 3, 3)).toBeNull();
    expect(nextState({ state: 'SEEN', blockNumber: null, orphanedAt: 102n }, 105n, 3, 3)).toBe('DROPPED');
    expect(nextState({ state: 'CONFIRMED', blockNumber: null, orphanedAt: 102n }, 105n, 3, 3)).toBe('DROPPED');
    expect(nextState({ state: 'DROPPED', blockNumber: null, orphanedAt: 102n }, 900n, 3, 3)).toBeNull();
  });

  test('a fetched range must chain by parent hash', () => {
    expect(isContiguous([{ hash: h(1), parentHash: h(0) }, { hash: h(2), parentHash: h(1) }])).toBe(true);
    expect(isContiguous([{ hash: h(1), parentHash: h(0) }, { hash: h(2), parentHash: h(5) }])).toBe(false);
  });

  test('balance reconciliation: deposits + Kassa\'s own transfers in − value and fees out', () => {
    expect(unexplainedNative({ balance: 100n, deposited: 100n, receivedFromKassa: 0n, sentValue: 0n, feesPaid: 0n })).toBe(0n);
    expect(unexplainedNative({ balance: 7n, deposited: 100n, receivedFromKassa: 50n, sentValue: 100n, feesPaid: 43n })).toBe(0n);
    expect(unexplainedNative({ balance: 57n, deposited: 100n, receivedFromKassa: 50n, sentValue: 100n, feesPaid: 43n })).toBe(50n);
    expect(unexplainedNative({ balance: 0n, deposited: 10n, receivedFromKassa: 0n, sentValue: 0n, feesPaid: 0n })).toBe(-10n);
  });
});
