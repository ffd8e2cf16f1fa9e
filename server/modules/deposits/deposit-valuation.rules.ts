/**
 * The amounts of one deposit (spec §2.5), pure and exact. The whole deposit
 * is valued for `displayAmount`; fees and payable amounts are computed on the
 * credited part only (zero for a deposit refunded in full), with CONTRACT §5's
 * formulas (money/fees.ts). Each figure is rounded once, in its currency.
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

export function valueDeposit(v: DepositValuationInput): Record<string, string> {
  const inDisplay = splitDeposit(v.creditedAmount.mul(v.rates.display), v.fees);
  const inSettlement = splitDeposit(v.creditedAmount.mul(v.rates.settlement), v.fees);
  const inUniform = splitDeposit(v.creditedAmount.mul(v.rates.uniform), v.fees);
  const inDeposit = splitDeposit(v.creditedAmount, v.fees);
  const out: Record<string, string> = {
    depositAmount: fmt(v.amount, v.currency),
    depositDistributedUserServiceFee: fmt(inDeposit.distributedUserServiceFee, v.currency),
    displayAmount: fmt(v.amount.mul(v.rates.display), v.displayCurrency),
    displayPayableAmount: fmt(inDisplay.payable, v.displayCurrency),
    displayServiceFee: fmt(inDisplay.serviceFee, v.displayCurrency),
    displayDistributedUserServiceFee: fmt(inDisplay.distributedUserServiceFee, v.displayCurrency),
    settlementPayableAmount: fmt(inSettlement.payable, v.settlementCurrency),
    settlementServiceFee: fmt(inSettlement.serviceFee, v.settlementCurrency),
    settlementDistributedUserServiceFee: fmt(inSettlement.distributedUserServiceFee, v.settlementCurrency),
    uniformPayableAmount: fmt(inUniform.payable, 'EUR'),
    uniformServiceFee: fmt(inUniform.serviceFee, 'EUR'),
    uniformDistributedUserServiceFee: fmt(inUniform.distributedUserServiceFee, 'EUR'),
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
