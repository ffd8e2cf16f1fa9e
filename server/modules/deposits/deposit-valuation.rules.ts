/**
 * The amounts of one deposit (spec §2.5), pure and exact. The whole deposit
 * is valued for `displayAmount`; fees and payable amounts are computed on the
 * credited part only (zero for a deposit refunded in full), with CONTRACT §5's
 * formulas (money/fees.ts). Each figure is rounded once, in its currency,
 * except the payable amount: it is the credited value as shown minus the fee
 * as shown, so the two always add up to the value the payment is credited
 * with, in the ledger as on the record (rounded on their own, they missed it
 * by a cent on about a quarter of deposits).
 */
import type { CryptoCurrency, FiatCurrency } from '../money/index.js';
import { Dec, formatAnyAmount } from '../money/index.js';
import { splitDeposit, type FeeSettings } from '../money/index.js';
import type { LockedRates } from '../money/index.js';

export type DepositValuationInput = {
  currency: string;
  amount: Dec;
  creditedAmount: Dec;
  displayCurrency: FiatCurrency;
  settlementCurrency: FiatCurrency | CryptoCurrency;
  /** Rates the deposit is valued with (locked or at receipt; stablecoins at peg). */
  rates: LockedRates;
  /** Market rates at receipt, for the depeg loss of stablecoins; absent otherwise. */
  marketRates?: LockedRates;
  fees: FeeSettings;
};

const fmt = formatAnyAmount;

/** The fee split of one currency, rounded so that payable + serviceFee = the value, rounded. */
function splitIn(value: Dec, currency: string, fees: FeeSettings) {
  const split = splitDeposit(value, fees);
  const serviceFee = fmt(split.serviceFee, currency);
  return {
    payable: fmt(new Dec(fmt(value, currency)).sub(serviceFee), currency),
    serviceFee,
    distributedUserServiceFee: fmt(split.distributedUserServiceFee, currency),
  };
}

export function valueDeposit(v: DepositValuationInput): Record<string, string> {
  const inDisplay = splitIn(v.creditedAmount.mul(v.rates.display), v.displayCurrency, v.fees);
  const inSettlement = splitIn(v.creditedAmount.mul(v.rates.settlement), v.settlementCurrency, v.fees);
  const inUniform = splitIn(v.creditedAmount.mul(v.rates.uniform), 'EUR', v.fees);
  const inDeposit = splitIn(v.creditedAmount, v.currency, v.fees);
  const out: Record<string, string> = {
    // Down, never showing more than arrived: 9.9999995 USDT on BSC (18 decimals on chain) is
    // "9.999999", not a "10" that would not cover a 10 USDT payment.
    depositAmount: fmt(v.amount, v.currency, 'DOWN'),
    depositDistributedUserServiceFee: inDeposit.distributedUserServiceFee,
    displayAmount: fmt(v.amount.mul(v.rates.display), v.displayCurrency),
    displayPayableAmount: inDisplay.payable,
    displayServiceFee: inDisplay.serviceFee,
    displayDistributedUserServiceFee: inDisplay.distributedUserServiceFee,
    settlementPayableAmount: inSettlement.payable,
    settlementServiceFee: inSettlement.serviceFee,
    settlementDistributedUserServiceFee: inSettlement.distributedUserServiceFee,
    uniformPayableAmount: inUniform.payable,
    uniformServiceFee: inUniform.serviceFee,
    uniformDistributedUserServiceFee: inUniform.distributedUserServiceFee,
    // Not API fields: the credited value, summed into the payment's actual amounts.
    creditedDisplayAmount: fmt(v.creditedAmount.mul(v.rates.display), v.displayCurrency),
    creditedUniformAmount: fmt(v.creditedAmount.mul(v.rates.uniform), 'EUR'),
  };
  if (v.marketRates) {
    // Peg value minus market value of the credited amount: what valuing at the peg cost.
    const loss = (peg: Dec, market: Dec) => v.creditedAmount.mul(peg.sub(market));
    out.displayRateDepegLossAmount = fmt(loss(v.rates.display, v.marketRates.display), v.displayCurrency);
    out.settlementRateDepegLossAmount = fmt(loss(v.rates.settlement, v.marketRates.settlement), v.settlementCurrency);
    out.uniformRateDepegLossAmount = fmt(loss(v.rates.uniform, v.marketRates.uniform), 'EUR');
  }
  return out;
}
