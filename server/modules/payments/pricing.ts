/**
 * Pricing at creation and at currency choice (CONTRACT §5): how much the end
 * user must send, in exact decimals, rounded once per currency (rules in
 * money/decimal.ts). Pure apart from asking the rates provider.
 */
import { CRYPTO_DECIMALS, isFiat, UNIFORM_CURRENCY, type CryptoCurrency, type FiatCurrency } from '../money/index.js';

import { Dec, roundTo } from '../money/index.js';
import { userFeeOnTop, type FeeSettings } from '../money/index.js';
import type { RatesPort } from '../money/index.js';
import { valuationRate } from '../money/index.js';

/** Most decimals of a crypto amount converted from fiat. */
export const QUOTE_DECIMALS = 8;

/**
 * A fiat value in `crypto`, rounded up to what a quote shows. A converted price needs no more
 * than 8 decimals (a fraction of a cent for any listed coin): "0.00833334 ETH" is payable,
 * "0.008333333333333334 ETH" is not. Up, so that paying what is shown always covers the value.
 */
export function quoteUp(value: Dec, crypto: CryptoCurrency): Dec {
  return value.toDecimalPlaces(Math.min(CRYPTO_DECIMALS[crypto] ?? QUOTE_DECIMALS, QUOTE_DECIMALS), Dec.ROUND_UP);
}

export type FiatPrice = { expectedDisplayAmount: Dec; expectedDisplayFee: Dec; expectedUniformAmount: Dec };

export type CryptoPrice = {
  expectedDepositAmount: Dec;
  expectedDepositFee: Dec;
  /** Display-currency units per unit of deposit currency, locked for FIXED payments. */
  rate: Dec;
};

/**
 * A payment priced in fiat: the user's fee share goes on top of the requested amount. `toUniform` is
 * the rate of `currency` in the uniform currency, asked once by the caller, so that the payment is
 * priced at the very rate it records (`pricing_rate`).
 */
export function priceFiat(currency: FiatCurrency, amount: Dec, fees: FeeSettings, toUniform: Dec): FiatPrice {
  const fee = roundTo(userFeeOnTop(amount, fees), currency);
  return { expectedDisplayAmount: amount, expectedDisplayFee: fee, expectedUniformAmount: roundTo(amount.add(fee).mul(toUniform), UNIFORM_CURRENCY) };
}

/** The crypto amount that covers a fiat price (NEW → PENDING, or a crypto-priced payment's display value). */
export async function priceInCrypto(
  rates: RatesPort,
  fiat: { currency: FiatCurrency; amount: Dec; fee: Dec },
  crypto: CryptoCurrency,
  at: Date,
): Promise<CryptoPrice> {
  const rate = await valuationRate(rates, crypto, fiat.currency, at);
  return {
    expectedDepositAmount: quoteUp(fiat.amount.add(fiat.fee).div(rate), crypto),
    expectedDepositFee: roundTo(fiat.fee.div(rate), crypto),
    rate,
  };
}

export type CryptoPricedPayment = FiatPrice & CryptoPrice & { displayCurrency: FiatCurrency };

/**
 * A payment priced in crypto. Its display currency is the business's
 * settlement currency when that is fiat, else EUR. Stablecoins are priced
 * at their USD peg (money/valuation.ts).
 */
export async function priceCrypto(
  rates: RatesPort,
  currency: CryptoCurrency,
  amount: Dec,
  settlementCurrency: string,
  fees: FeeSettings,
  at: Date,
): Promise<CryptoPricedPayment> {
  const displayCurrency: FiatCurrency = isFiat(settlementCurrency) ? settlementCurrency : UNIFORM_CURRENCY;
  const fee = roundTo(userFeeOnTop(amount, fees), currency);
  const expectedDepositAmount = roundTo(amount.add(fee), currency, 'UP');
  const rate = await valuationRate(rates, currency, displayCurrency, at);
  const toEur = await valuationRate(rates, currency, UNIFORM_CURRENCY, at);
  return {
    displayCurrency,
    expectedDisplayAmount: roundTo(amount.mul(rate), displayCurrency),
    expectedDisplayFee: roundTo(fee.mul(rate), displayCurrency),
    expectedUniformAmount: roundTo(expectedDepositAmount.mul(toEur), UNIFORM_CURRENCY),
    expectedDepositAmount,
    expectedDepositFee: fee,
    rate,
  };
}
