/** Coin selection invariants over random wallets (fast-check). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { feeFor, InsufficientFundsError, selectCoins, SIZES } from '../../../server/adapters/chain/utxo/wallet.rules.js';

describe('selectCoins', () => {
  it('balances exactly, pays at least the rate, never makes dust change, uses each coin once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 1n, max: 5_000_000_000n }), { minLength: 1, maxLength: 30 }),
        fc.bigInt({ min: 546n, max: 10_000_000_000n }),
        fc.bigInt({ min: 1_000n, max: 200_000n }),
        fc.constantFrom(SIZES.p2wpkh, SIZES['p2pkh-cashaddr']),
        (amounts, amount, satPerKvb, sizes) => {
          const coins = amounts.map((a, i) => ({ key: `t${i}:0`, amount: a }));
          let s;
          try {
            s = selectCoins({ coins, amount, satPerKvb, sizes, payeeOutputSize: sizes.output, dust: 546n });
          } catch (error) {
            expect(error).toBeInstanceOf(InsufficientFundsError);
            // refusing is only right when even all coins cannot pay amount plus a one-output fee
            const all = amounts.reduce((a, b) => a + b, 0n);
            expect(all < amount + feeFor(sizes.overhead + coins.length * sizes.input + sizes.output, satPerKvb)).toBe(true);
            return;
          }
          const total = s.inputs.reduce((a, c) => a + c.amount, 0n);
          expect(total).toBe(amount + s.fee + s.change);
          expect(new Set(s.inputs.map((c) => c.key)).size).toBe(s.inputs.length);
          expect(s.fee).toBeGreaterThanOrEqual(feeFor(s.vsize, satPerKvb));
          expect(s.change === 0n || s.change > 546n).toBe(true);
          expect(s.vsize).toBe(sizes.overhead + s.inputs.length * sizes.input + sizes.output * (s.change > 0n ? 2 : 1));
        },
      ),
      { numRuns: 500 },
    );
  });
});
