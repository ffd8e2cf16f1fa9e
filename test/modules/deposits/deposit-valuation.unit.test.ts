/**
 * valueDeposit (the amounts of spec §2.5) against values computed by hand
 * with the fee formulas of CONTRACT §5:
 *   base = amount / (1 + F·U/10000); serviceFee = base·F/100;
 *   distributed = base·F/100·U/100; payable = amount − serviceFee.
 * The whole deposit is valued for `displayAmount`; fees and payable amounts
 * are on the credited part only. Each figure is rounded once in its currency
 * (fiat: minor units, HALF_EVEN; crypto: its decimals, trailing zeros dropped),
 * but payable = the credited value as shown − the fee as shown, so the two add up.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Dec, formatAnyAmount } from '../../../server/modules/money/decimal.js';
import { SandboxRates } from '../../../server/adapters/rates/sandbox.js';
import { valuationRates } from '../../../server/modules/money/valuation.js';
import { valueDeposit, type DepositValuationInput } from '../../../server/modules/deposits/deposit-valuation.rules.js';
import { DEPOSIT_AMOUNT_FIELDS, paymentActuals } from '../../../server/modules/payments/deposit-record.rules.js';

const fees = (serviceFeePercent: string, userFeeSharePercent: string) => ({ serviceFeePercent, userFeeSharePercent });
const eur = (rate: string) => ({ display: new Dec(rate), settlement: new Dec(rate), uniform: new Dec(rate) });

function btc(over: Partial<DepositValuationInput> = {}): DepositValuationInput {
  return {
    currency: 'BTC',
    amount: new Dec('0.01'),
    creditedAmount: new Dec('0.01'),
    displayCurrency: 'EUR',
    settlementCurrency: 'EUR',
    rates: eur('60000'),
    fees: fees('1', '0'),
    ...over,
  };
}

describe('valueDeposit', () => {
  it('F = 1 %, U = 0: 0.01 BTC at 60000 EUR, display and settlement EUR', () => {
    // value: 0.01 × 60000 = 600.00 EUR
    // base = 600 / (1 + 1·0/10000) = 600; fee = 600 × 1/100 = 6.00; distributed = 6 × 0/100 = 0.00
    // payable = 600 − 6 = 594.00; in BTC: fee 0.0001, distributed 0
    expect(valueDeposit(btc())).toEqual({
      depositAmount: '0.01',
      depositDistributedUserServiceFee: '0',
      displayAmount: '600.00',
      displayPayableAmount: '594.00',
      displayServiceFee: '6.00',
      displayDistributedUserServiceFee: '0.00',
      settlementPayableAmount: '594.00',
      settlementServiceFee: '6.00',
      settlementDistributedUserServiceFee: '0.00',
      uniformPayableAmount: '594.00',
      uniformServiceFee: '6.00',
      uniformDistributedUserServiceFee: '0.00',
      creditedDisplayAmount: '600.00',
      creditedUniformAmount: '600.00',
    });
  });

  it('F = 2 %, U = 50 %: base = amount / 1.01', () => {
    // 0.0101 BTC × 60000 = 606.00 EUR (600 asked + the user's half of the 2 % fee: 6)
    // base = 606 / (1 + 2·50/10000) = 606 / 1.01 = 600
    // fee = 600 × 2/100 = 12.00; distributed = 12 × 50/100 = 6.00; payable = 606 − 12 = 594.00
    // in BTC: base = 0.0101 / 1.01 = 0.01; fee 0.0002; distributed 0.0001
    const v = valueDeposit(btc({ amount: new Dec('0.0101'), creditedAmount: new Dec('0.0101'), fees: fees('2', '50') }));
    expect(v.depositAmount).toBe('0.0101');
    expect(v.depositDistributedUserServiceFee).toBe('0.0001');
    expect(v.displayAmount).toBe('606.00');
    expect(v.displayServiceFee).toBe('12.00');
    expect(v.displayDistributedUserServiceFee).toBe('6.00');
    expect(v.displayPayableAmount).toBe('594.00');
    expect(v.settlementServiceFee).toBe('12.00');
    expect(v.settlementDistributedUserServiceFee).toBe('6.00');
    expect(v.settlementPayableAmount).toBe('594.00');
    expect(v.uniformServiceFee).toBe('12.00');
    expect(v.uniformDistributedUserServiceFee).toBe('6.00');
    expect(v.uniformPayableAmount).toBe('594.00');
    expect(v.creditedDisplayAmount).toBe('606.00');
  });

  it('a partial credit: the whole deposit is valued, fees and payable on the credited part', () => {
    // deposit 0.015 BTC (900.00 EUR), credited 0.01 (600.00 EUR); the other 0.005 is refunded.
    // fee = 600 × 1 % = 6.00; payable = 600 − 6 = 594.00
    const v = valueDeposit(btc({ amount: new Dec('0.015'), creditedAmount: new Dec('0.01') }));
    expect(v.depositAmount).toBe('0.015');
    expect(v.displayAmount).toBe('900.00');
    expect(v.displayServiceFee).toBe('6.00');
    expect(v.displayPayableAmount).toBe('594.00');
    expect(v.settlementPayableAmount).toBe('594.00');
    expect(v.uniformPayableAmount).toBe('594.00');
    expect(v.creditedDisplayAmount).toBe('600.00');
    expect(v.creditedUniformAmount).toBe('600.00');
  });

  it('a full refund (credited 0): payable and fees are zero, the deposit is still valued', () => {
    // 0.003 BTC × 60000 = 180.00 EUR shown; nothing credited
    const v = valueDeposit(btc({ amount: new Dec('0.003'), creditedAmount: new Dec(0), fees: fees('2', '50') }));
    expect(v.depositAmount).toBe('0.003');
    expect(v.depositDistributedUserServiceFee).toBe('0');
    expect(v.displayAmount).toBe('180.00');
    for (const field of [
      'displayPayableAmount', 'displayServiceFee', 'displayDistributedUserServiceFee',
      'settlementPayableAmount', 'settlementServiceFee', 'settlementDistributedUserServiceFee',
      'uniformPayableAmount', 'uniformServiceFee', 'uniformDistributedUserServiceFee', 'creditedDisplayAmount', 'creditedUniformAmount',
    ]) {
      expect({ field, value: v[field] }).toEqual({ field, value: '0.00' });
    }
  });

  it('stablecoin depeg: 100 USDT, display EUR, settlement USD, valued at the USD peg', async () => {
    // Peg rates: USDT = 1 USD; 1 USD = 0.92 EUR → display 0.92, settlement 1, uniform 0.92.
    const peg = await valuationRates(new SandboxRates(), 'USDT', 'EUR', 'USD', new Date());
    expect([peg.display.toFixed(), peg.settlement.toFixed(), peg.uniform.toFixed()]).toEqual(['0.92', '1', '0.92']);
    // Market: USDT = 0.9195 EUR, i.e. 0.9195 / 0.92 USD = 0.99945652… USD.
    const market = { display: new Dec('0.9195'), settlement: new Dec('0.9195').div('0.92'), uniform: new Dec('0.9195') };
    const v = valueDeposit({
      currency: 'USDT', amount: new Dec('100'), creditedAmount: new Dec('100'), displayCurrency: 'EUR', settlementCurrency: 'USD',
      rates: peg, marketRates: market, fees: fees('1', '0'),
    });
    // display: 100 × 0.92 = 92.00 EUR; fee 0.92; payable 91.08
    expect(v.displayAmount).toBe('92.00');
    expect(v.displayServiceFee).toBe('0.92');
    expect(v.displayPayableAmount).toBe('91.08');
    // settlement: 100 × 1 = 100 USD; fee 1.00; payable 99.00
    expect(v.settlementServiceFee).toBe('1.00');
    expect(v.settlementPayableAmount).toBe('99.00');
    expect(v.uniformPayableAmount).toBe('91.08');
    // loss = credited × (peg − market):
    //   EUR: 100 × (0.92 − 0.9195) = 100 × 0.0005 = 0.05
    //   USD: 100 × (1 − 0.9195/0.92) = 100 × 0.0005/0.92 = 0.0543478… → 0.05
    expect(v.displayRateDepegLossAmount).toBe('0.05');
    expect(v.settlementRateDepegLossAmount).toBe('0.05');
    expect(v.uniformRateDepegLossAmount).toBe('0.05');
  });

  it('stablecoin depeg on a larger amount shows the USD/EUR difference: 1000 USDT', () => {
    // EUR: 1000 × 0.0005 = 0.50; USD: 1000 × 0.0005/0.92 = 0.5434782… → 0.54
    // the loss is on the credited part only: credited 600 → EUR 0.30, USD 0.326086… → 0.33
    const peg = { display: new Dec('0.92'), settlement: new Dec('1'), uniform: new Dec('0.92') };
    const market = { display: new Dec('0.9195'), settlement: new Dec('0.9195').div('0.92'), uniform: new Dec('0.9195') };
    const base = { currency: 'USDT', amount: new Dec('1000'), displayCurrency: 'EUR', settlementCurrency: 'USD', rates: peg, marketRates: market, fees: fees('1', '0') } as const;
    const full = valueDeposit({ ...base, creditedAmount: new Dec('1000') });
    expect([full.displayRateDepegLossAmount, full.settlementRateDepegLossAmount, full.uniformRateDepegLossAmount]).toEqual(['0.50', '0.54', '0.50']);
    const part = valueDeposit({ ...base, creditedAmount: new Dec('600') });
    expect([part.displayRateDepegLossAmount, part.settlementRateDepegLossAmount, part.uniformRateDepegLossAmount]).toEqual(['0.30', '0.33', '0.30']);
  });

  it('no market rates (not a stablecoin): no depeg fields', () => {
    const v = valueDeposit(btc());
    expect(v).not.toHaveProperty('displayRateDepegLossAmount');
    expect(v).not.toHaveProperty('settlementRateDepegLossAmount');
    expect(v).not.toHaveProperty('uniformRateDepegLossAmount');
  });

  it('settlement in BTC: 8 decimals, rounded half-even, trailing zeros dropped', () => {
    // 0.01234567 BTC, F = 1 %, U = 0, settlement rate BTC→BTC = 1
    // fee = 0.0001234567 → 8 dp: 0.00012345|67 → 0.00012346
    // payable = 0.01234567 − 0.0001234567 = 0.0122222133 → 0.01222221 (fee + payable = 0.01234567)
    // display: 0.01234567 × 60000 = 740.7402 → 740.74; fee 7.407402 → 7.41; payable 733.332798 → 733.33
    const v = valueDeposit(btc({
      amount: new Dec('0.01234567'), creditedAmount: new Dec('0.01234567'), settlementCurrency: 'BTC',
      rates: { display: new Dec('60000'), settlement: new Dec('1'), uniform: new Dec('60000') },
    }));
    expect(v.settlementServiceFee).toBe('0.00012346');
    expect(v.settlementPayableAmount).toBe('0.01222221');
    expect(v.settlementDistributedUserServiceFee).toBe('0');
    expect(v.displayAmount).toBe('740.74');
    expect(v.displayServiceFee).toBe('7.41');
    expect(v.displayPayableAmount).toBe('733.33');
    expect(v.uniformPayableAmount).toBe('733.33');
    // and a round amount: 0.01 BTC → fee 0.0001, payable 0.0099 (not "0.00990000")
    const round = valueDeposit(btc({ settlementCurrency: 'BTC', rates: { display: new Dec('60000'), settlement: new Dec('1'), uniform: new Dec('60000') } }));
    expect(round.settlementServiceFee).toBe('0.0001');
    expect(round.settlementPayableAmount).toBe('0.0099');
  });

  it('settlement in BTC of a EUR-valued stablecoin: USDT → BTC at the peg', () => {
    // 100 USDT at peg = 100 USD = 92 EUR = 92/60000 BTC = 0.00153333… BTC
    // fee = 0.0000153333… → 0.00001533; payable = 99 × 0.92/60000 = 91.08/60000 = 0.001518
    const v = valueDeposit({
      currency: 'USDT', amount: new Dec('100'), creditedAmount: new Dec('100'), displayCurrency: 'EUR', settlementCurrency: 'BTC',
      rates: { display: new Dec('0.92'), settlement: new Dec('0.92').div('60000'), uniform: new Dec('0.92') }, fees: fees('1', '0'),
    });
    expect(v.settlementServiceFee).toBe('0.00001533');
    expect(v.settlementPayableAmount).toBe('0.001518');
  });

  it('fiat rounding is half-even, once per figure: 7.50625 LTC at 80 EUR = 600.50 EUR', () => {
    // fee = 600.50 × 1 % = 6.005 → 6.00 (half to even; half-up would give 6.01)
    // payable = 600.50 − 6.00 = 594.50, the value as shown minus the fee as shown
    const v = valueDeposit({
      currency: 'LTC', amount: new Dec('7.50625'), creditedAmount: new Dec('7.50625'), displayCurrency: 'EUR', settlementCurrency: 'EUR',
      rates: eur('80'), fees: fees('1', '0'),
    });
    expect(v.displayAmount).toBe('600.50');
    expect(v.displayServiceFee).toBe('6.00');
    expect(v.displayPayableAmount).toBe('594.50');
    // in LTC: fee 0.0750625 → 8 dp 0.07506250 → "0.0750625"
    expect(v.depositAmount).toBe('7.50625');
  });

  it('a JPY display currency has no minor units', () => {
    // 0.01 BTC at 60000 EUR, 1 JPY = 0.0062 EUR → 1 BTC = 60000/0.0062 = 9677419.35… JPY
    // display: 0.01 × 9677419.354838… = 96774.19… → 96774; fee 967.7419… → 968; payable 95806.45… → 95806
    const v = valueDeposit(btc({ displayCurrency: 'JPY', rates: { display: new Dec('60000').div('0.0062'), settlement: new Dec('60000'), uniform: new Dec('60000') } }));
    expect(v.displayAmount).toBe('96774');
    expect(v.displayServiceFee).toBe('968');
    expect(v.displayPayableAmount).toBe('95806');
  });

  it('every API amount field it produces is one of the deposit record fields', () => {
    const v = valueDeposit({
      currency: 'USDT', amount: new Dec('1'), creditedAmount: new Dec('1'), displayCurrency: 'EUR', settlementCurrency: 'EUR',
      rates: eur('0.92'), marketRates: eur('0.9195'), fees: fees('1', '0'),
    });
    const apiKeys = Object.keys(v).filter((k) => !k.startsWith('credited'));
    expect(apiKeys.sort()).toEqual([...DEPOSIT_AMOUNT_FIELDS].sort());
  });

  it('payable is the value as shown minus the fee as shown: 0.00010042 BTC at 60000 EUR, F = 1 %', () => {
    // value 6.0252 → 6.03; fee 0.060252 → 0.06; payable 6.03 − 0.06 = 5.97 (rounding 5.964948 on its
    // own would give 5.96, a cent short of what the payment is credited with)
    const v = valueDeposit(btc({ amount: new Dec('0.00010042'), creditedAmount: new Dec('0.00010042') }));
    expect([v.displayAmount, v.displayServiceFee, v.displayPayableAmount]).toEqual(['6.03', '0.06', '5.97']);
    expect([v.settlementServiceFee, v.settlementPayableAmount]).toEqual(['0.06', '5.97']);
    // 0.00010834 BTC = 6.5004 → 6.50; fee 0.065004 → 0.07; payable 6.43 (on its own: 6.435396 → 6.44)
    const w = valueDeposit(btc({ amount: new Dec('0.00010834'), creditedAmount: new Dec('0.00010834') }));
    expect([w.displayAmount, w.displayServiceFee, w.displayPayableAmount]).toEqual(['6.50', '0.07', '6.43']);
  });

  it('in every currency, payable + service fee is the credited value as shown (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 1000000 }),
        fc.integer({ min: 0, max: 1000000 }),
        (sats, creditedSats, f, u) => {
          const credited = new Dec((creditedSats > sats ? sats : creditedSats).toString()).div(1e8);
          const v = valueDeposit(btc({
            amount: new Dec(sats.toString()).div(1e8),
            creditedAmount: credited,
            rates: { display: new Dec('61234.57'), settlement: new Dec('0.98765'), uniform: new Dec('57111.1') },
            settlementCurrency: 'USDT',
            fees: fees(new Dec(f).div(10000).toString(), new Dec(u).div(10000).toString()),
          }));
          expect(new Dec(v.displayPayableAmount!).add(v.displayServiceFee!).toString()).toBe(new Dec(v.creditedDisplayAmount!).toString());
          expect(new Dec(v.uniformPayableAmount!).add(v.uniformServiceFee!).toString()).toBe(new Dec(v.creditedUniformAmount!).toString());
          const settled = new Dec(formatAnyAmount(credited.mul('0.98765'), 'USDT'));
          expect(new Dec(v.settlementPayableAmount!).add(v.settlementServiceFee!).toString()).toBe(settled.toString());
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('an amount received is shown rounded down', () => {
  it('9.9999995 USDT (18 decimals on BSC) is "9.999999", not a "10" that would not cover 10 USDT', () => {
    const v = valueDeposit({
      currency: 'USDT', amount: new Dec('9.9999995'), creditedAmount: new Dec('9.9999995'), displayCurrency: 'EUR', settlementCurrency: 'EUR',
      rates: eur('0.92'), fees: fees('1', '0'),
    });
    expect(v.depositAmount).toBe('9.999999');
    expect(paymentActuals([{ depositCurrency: 'USDT', creditedAmount: '9.9999995', amounts: v } as never], { deposit: 'USDT', display: 'EUR' }).depositAmount).toBe('9.999999');
  });
});
