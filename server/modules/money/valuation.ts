/**
 * How Kassa values a cryptocurrency in another currency. Stablecoins (USDC,
 * USDT) are valued at their 1:1 USD peg, so a merchant pricing in fiat is
 * paid the peg value; the difference to the market rate is reported as
 * depeg loss on each deposit. Everything else is valued at market.
 */
import { USD_STABLECOINS, type CryptoCurrency } from './catalog.js';
import { Dec } from './decimal.js';
import type { PricedCurrency } from './catalog.js';
import type { RatesPort } from './ports.js';

export const isStablecoin = (c: string): boolean => (USD_STABLECOINS as readonly string[]).includes(c);

export async function valuationRate(rates: RatesPort, crypto: CryptoCurrency, target: PricedCurrency, at: Date): Promise<Dec> {
  if (crypto === target) return new Dec(1);
  if (isStablecoin(crypto)) return target === 'USD' ? new Dec(1) : rates.rate('USD', target, at);
  return rates.rate(crypto, target, at);
}

export type LockedRates = { display: Dec; settlement: Dec; uniform: Dec };

/** The three rates a deposit is valued with: to display, settlement and uniform (EUR) currency. */
export async function valuationRates(
  rates: RatesPort,
  crypto: CryptoCurrency,
  display: PricedCurrency,
  settlement: PricedCurrency,
  at: Date,
): Promise<LockedRates> {
  const [d, s, u] = await Promise.all([
    valuationRate(rates, crypto, display, at),
    valuationRate(rates, crypto, settlement, at),
    valuationRate(rates, crypto, 'EUR', at),
  ]);
  return { display: d, settlement: s, uniform: u };
}
