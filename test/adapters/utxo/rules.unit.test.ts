/** The engine's pure rules: confirmations, state machine, gap, fees, coin selection, amounts, params. */
import { describe, expect, it } from 'vitest';
import { addressesToDerive, confirmationsAt, creditedNextState, forkPoint, needsReport, nextState, transactionFee } from '../../../server/adapters/chain/utxo/scanner.rules.js';
import { chooseFeeRate, feeFor, InsufficientFundsError, isSpendable, replacementFee, satPerVbToKvb, selectCoins, SIZES } from '../../../server/adapters/chain/utxo/wallet.rules.js';
import { fromBaseUnits, toBaseUnits } from '../../../server/adapters/chain/utxo/amounts.js';
import { confirmationsFor, resolveParams } from '../../../server/adapters/chain/utxo/params.js';
import { exactAmounts } from '../../../server/adapters/chain/utxo/rpc.js';

describe('scanner rules', () => {
  it('counts confirmations as nodes do: the block holding the transaction is the first', () => {
    expect(confirmationsAt(100, 100)).toBe(1);
    expect(confirmationsAt(105, 100)).toBe(6);
    expect(confirmationsAt(100, null)).toBe(0);
    expect(confirmationsAt(99, 100)).toBe(0);
  });

  it('credits at the configured depth, never earlier, and drops what is neither mined nor in the mempool', () => {
    const seen = { state: 'SEEN' as const, inMempool: false, inBestChainBlock: false };
    expect(nextState({ ...seen, blockHeight: 100 }, 104, 6)).toBe('SEEN');
    expect(nextState({ ...seen, blockHeight: 100 }, 105, 6)).toBe('CONFIRMED');
    expect(nextState({ ...seen, blockHeight: null, inMempool: true }, 105, 6)).toBe('SEEN');
    expect(nextState({ ...seen, blockHeight: null, inBestChainBlock: true }, 105, 6)).toBe('SEEN');
    expect(nextState({ ...seen, blockHeight: null }, 105, 6)).toBe('DROPPED');
    // DROPPED is final; CONFIRMED moves only by creditedNextState
    expect(nextState({ ...seen, state: 'DROPPED', blockHeight: 90 }, 105, 6)).toBe('DROPPED');
    expect(nextState({ ...seen, state: 'CONFIRMED', blockHeight: null }, 105, 6)).toBe('CONFIRMED');
  });

  it('drops a credited output off the chain only once it stayed gone from blocks and mempool for the depth', () => {
    const off = { blockHeight: null, inMempool: false, inBestChainBlock: false, goneSince: null };
    // back in a block, in the mempool, or in a block not walked yet: stays CONFIRMED, the count starts over
    expect(creditedNextState({ ...off, blockHeight: 100, goneSince: 101 }, 110, 6)).toEqual({ state: 'CONFIRMED', goneSince: null });
    expect(creditedNextState({ ...off, inMempool: true, goneSince: 101 }, 110, 6)).toEqual({ state: 'CONFIRMED', goneSince: null });
    expect(creditedNextState({ ...off, inBestChainBlock: true }, 110, 6)).toEqual({ state: 'CONFIRMED', goneSince: null });
    // first found gone at tip 110: the count starts there
    expect(creditedNextState(off, 110, 6)).toEqual({ state: 'CONFIRMED', goneSince: 110 });
    expect(creditedNextState({ ...off, goneSince: 110 }, 115, 6)).toEqual({ state: 'CONFIRMED', goneSince: 110 });
    expect(creditedNextState({ ...off, goneSince: 110 }, 116, 6)).toEqual({ state: 'DROPPED', goneSince: 110 });
  });

  it('reports a change of state, or of depth while SEEN, once', () => {
    expect(needsReport({ state: 'SEEN', confirmations: 0 }, { state: null, confirmations: null })).toBe(true);
    expect(needsReport({ state: 'SEEN', confirmations: 0 }, { state: 'SEEN', confirmations: 0 })).toBe(false);
    expect(needsReport({ state: 'SEEN', confirmations: 2 }, { state: 'SEEN', confirmations: 1 })).toBe(true);
    expect(needsReport({ state: 'CONFIRMED', confirmations: 9 }, { state: 'CONFIRMED', confirmations: 6 })).toBe(false);
    expect(needsReport({ state: 'DROPPED', confirmations: 0 }, { state: 'SEEN', confirmations: 1 })).toBe(true);
  });

  it('keeps the unused gap bounded', () => {
    expect(addressesToDerive(0, -1, 20)).toBe(20);
    expect(addressesToDerive(20, -1, 20)).toBe(0);
    expect(addressesToDerive(20, 4, 20)).toBe(5);
    expect(addressesToDerive(30, 4, 20)).toBe(0);
  });

  it('fee = inputs − outputs, unknown for a coinbase', () => {
    expect(transactionFee([150_000_000n, 50_000_000n], [120_000_000n, 79_990_000n])).toBe(10_000n);
    expect(transactionFee([null], [5_000_000_000n])).toBeNull();
    expect(transactionFee([], [1n])).toBeNull();
  });

  it('finds the fork point among stored blocks', () => {
    const stored = [
      { height: 10, hash: 'a10' },
      { height: 11, hash: 'a11' },
      { height: 12, hash: 'a12' },
    ];
    expect(forkPoint(stored, new Map([[12, 'b12'], [11, 'a11'], [10, 'a10']]))).toEqual({ height: 11, hash: 'a11' });
    expect(forkPoint(stored, new Map([[12, undefined], [11, 'b11'], [10, 'b10']]))).toBeNull();
  });
});

describe('wallet rules', () => {
  it('takes the estimate when the node has one, the fallback when not, never below the floor', () => {
    const fallback = satPerVbToKvb('10');
    const floor = satPerVbToKvb('1');
    expect(chooseFeeRate({ feerate: '0.00012345', errors: [] }, fallback, floor)).toEqual({ satPerKvb: 12_345n, source: 'estimate' });
    expect(chooseFeeRate({ errors: ['Insufficient data or no feerate found'] }, fallback, floor)).toEqual({ satPerKvb: 10_000n, source: 'fallback' });
    expect(chooseFeeRate(null, fallback, floor)).toEqual({ satPerKvb: 10_000n, source: 'fallback' });
    expect(chooseFeeRate({ feerate: '0.00000500' }, fallback, floor)).toEqual({ satPerKvb: 1_000n, source: 'estimate' });
    expect(satPerVbToKvb('2.5')).toBe(2_500n);
    expect(() => satPerVbToKvb('0')).toThrow();
  });

  it('rounds the fee up', () => {
    expect(feeFor(141, 10_000n)).toBe(1_410n);
    expect(feeFor(141, 1_001n)).toBe(142n);
  });

  const sizes = SIZES.p2wpkh;
  it('selects largest first, with change above dust', () => {
    const coins = [
      { key: 'a:0', amount: 30_000n },
      { key: 'b:0', amount: 100_000n },
      { key: 'c:0', amount: 60_000n },
    ];
    const s = selectCoins({ coins, amount: 120_000n, satPerKvb: 10_000n, sizes, payeeOutputSize: 31, dust: 546n });
    expect(s.inputs.map((c) => c.key)).toEqual(['b:0', 'c:0']);
    expect(s.vsize).toBe(11 + 2 * 68 + 31 + 31);
    expect(s.fee).toBe(2_090n);
    expect(s.change).toBe(160_000n - 120_000n - 2_090n);
  });

  it('leaves dust change to the fee', () => {
    const s = selectCoins({ coins: [{ key: 'a:0', amount: 101_500n }], amount: 100_000n, satPerKvb: 10_000n, sizes, payeeOutputSize: 31, dust: 546n });
    expect(s.change).toBe(0n);
    expect(s.fee).toBe(1_500n);
    expect(s.inputs).toHaveLength(1);
  });

  it('refuses when the coins cannot pay amount and fee', () => {
    expect(() => selectCoins({ coins: [{ key: 'a:0', amount: 100_500n }], amount: 100_000n, satPerKvb: 10_000n, sizes, payeeOutputSize: 31, dust: 546n })).toThrow(
      InsufficientFundsError,
    );
  });

  it('spends credited deposits and mined change only', () => {
    expect(isSpendable({ branch: 0, state: 'SEEN', blockHeight: 5, spentBy: null })).toBe(false);
    expect(isSpendable({ branch: 0, state: 'CONFIRMED', blockHeight: 5, spentBy: null })).toBe(true);
    expect(isSpendable({ branch: 0, state: 'CONFIRMED', blockHeight: 5, spentBy: 'x' })).toBe(false);
    expect(isSpendable({ branch: 1, state: 'SEEN', blockHeight: null, spentBy: null })).toBe(false);
    expect(isSpendable({ branch: 1, state: 'SEEN', blockHeight: 7, spentBy: null })).toBe(true);
    expect(isSpendable({ branch: 1, state: 'DROPPED', blockHeight: null, spentBy: null })).toBe(false);
    // a credit whose block left the best chain waits until it is mined again
    expect(isSpendable({ branch: 0, state: 'CONFIRMED', blockHeight: null, spentBy: null })).toBe(false);
  });
});

describe('amounts and parameters', () => {
  it('converts whole coins and base units exactly', () => {
    expect(toBaseUnits('1.5')).toBe(150_000_000n);
    expect(toBaseUnits('20999999.99999999')).toBe(2_099_999_999_999_999n);
    expect(toBaseUnits('0.00000001')).toBe(1n);
    expect(() => toBaseUnits('0.000000001')).toThrow();
    expect(() => toBaseUnits('-1')).toThrow();
    expect(fromBaseUnits(150_000_000n)).toBe('1.5');
    expect(fromBaseUnits(1n)).toBe('0.00000001');
    expect(fromBaseUnits(2_099_999_999_999_999n)).toBe('20999999.99999999');
  });

  it('keeps Core amounts exact: numbers in amount fields arrive as strings', () => {
    const parsed = JSON.parse(exactAmounts('{"result":{"vout":[{"value":20999999.99999999,"n":0}],"feerate":0.00001000,"blocks":7}}'));
    expect(parsed.result.vout[0]).toEqual({ value: '20999999.99999999', n: 0 });
    expect(parsed.result.feerate).toBe('0.00001000');
    expect(parsed.result.blocks).toBe(7);
    expect(JSON.parse(exactAmounts('{"mempoolminfee":0.00001000,"size":3}'))).toEqual({ mempoolminfee: '0.00001000', size: 3 });
  });

  it('resolves prefixes from the chain the node reports, and default depths', () => {
    expect(resolveParams('BTC', 'main').bech32).toBe('bc');
    expect(resolveParams('BTC', 'signet').bech32).toBe('tb');
    expect(resolveParams('LTC', 'regtest')).toMatchObject({ bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a });
    expect(resolveParams('BCH', 'test').cashAddrPrefix).toBe('bchtest');
    expect(() => resolveParams('LTC', 'nonsense')).toThrow(/unknown chain/);
    expect([confirmationsFor('BTC'), confirmationsFor('LTC'), confirmationsFor('BCH'), confirmationsFor('LTC', 3)]).toEqual([2, 6, 6, 3]);
  });
});

describe('replacement fee (BIP-125)', () => {
  const base = { vsize: 141, oldFee: 1_410n, change: 100_000n, incrementalSatPerKvb: 1_000n, dust: 546n };
  it('pays the market rate over its size, the difference from the change', () => {
    expect(replacementFee({ ...base, marketSatPerKvb: 40_000n })).toEqual({ fee: 5_640n, change: 100_000n - (5_640n - 1_410n) });
  });
  it('pays at least the old fee plus the incremental relay fee over its size, even when the market is barely above', () => {
    // 11 sat/vB would be 1,551 sat: less than 1,410 + 141.
    expect(replacementFee({ ...base, marketSatPerKvb: 11_000n })).toEqual({ fee: 1_551n, change: 100_000n - 141n });
    expect(replacementFee({ ...base, marketSatPerKvb: 10_500n })).toEqual({ fee: 1_551n, change: 100_000n - 141n });
  });
  it('is none when the change would not stay above dust', () => {
    // 4,230 more fee: 4,777 of change leaves 547, 4,776 leaves the 546 of dust.
    expect(replacementFee({ ...base, change: 4_777n, marketSatPerKvb: 40_000n })).toEqual({ fee: 5_640n, change: 547n });
    expect(replacementFee({ ...base, change: 4_776n, marketSatPerKvb: 40_000n })).toBeNull();
    expect(replacementFee({ ...base, change: 0n, marketSatPerKvb: 40_000n })).toBeNull();
  });
});

