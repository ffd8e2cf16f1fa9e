/**
 * The sandbox `RatesPort`: a fixed table, so that every amount in tests and
 * demos can be computed by hand. Live sources implement the same port in
 * their own files beside this one.
 */
import { Dec, type PricedCurrency, type RatesPort } from '../../modules/money/index.js';

/**
 * Sandbox table: the value of one unit of each currency in EUR (the uniform
 * currency). Documented in the README; changing it changes expected amounts.
 * USDC and USDT trade slightly off their USD peg so that depeg loss shows.
 */
export const SANDBOX_EUR_VALUES: Record<PricedCurrency, string> = {
  // fiat
  AED: '0.25', ARS: '0.001', AUD: '0.6', BDT: '0.0075', BGN: '0.5113', BRL: '0.17', CAD: '0.68',
  CHF: '1.05', CLP: '0.001', CNY: '0.13', CZK: '0.04', DKK: '0.134', EUR: '1', GBP: '1.17',
  HKD: '0.118', HRK: '0.1327', HUF: '0.0025', IDR: '0.00006', ILS: '0.25', INR: '0.011',
  ISK: '0.0066', JPY: '0.0062', KES: '0.0071', KRW: '0.00068', MXN: '0.05', MYR: '0.2', NOK: '0.086',
  NZD: '0.55', PEN: '0.25', PHP: '0.016', PLN: '0.23', QAR: '0.25', RON: '0.2', SEK: '0.087',
  SGD: '0.68', THB: '0.026', TRY: '0.027', USD: '0.92', VND: '0.000037', ZAR: '0.05',
  // crypto
  BCH: '400', BNB: '550', BTC: '60000', ETH: '3000', LINK: '15', LTC: '80', SOL: '150', TRX: '0.12',
  USDC: '0.9191', USDT: '0.9195', XLM: '0.1', XRP: '0.5',
  // delisted 2022-07-15: priced only to value refunds
  BAT: '0.2', BNT: '0.5', CVC: '0.1', ENJ: '0.2', MITH: '0.001', MTL: '1', OMG: '0.5', REP: '1',
};

export class SandboxRates implements RatesPort {
  /** Each pair's rate, divided once (a `Dec` is immutable and the table never changes). */
  readonly #rates = new Map<string, Dec>();

  async rate(from: PricedCurrency, to: PricedCurrency, _at?: Date): Promise<Dec> {
    const pair = `${from}/${to}`;
    let rate = this.#rates.get(pair);
    if (rate === undefined) this.#rates.set(pair, (rate = new Dec(SANDBOX_EUR_VALUES[from]).div(SANDBOX_EUR_VALUES[to])));
    return rate;
  }

  async provenance(from: PricedCurrency, to: PricedCurrency, at: Date): Promise<{ rate: Dec; sources: string[]; at: Date }> {
    return { rate: await this.rate(from, to, at), sources: ['sandbox'], at };
  }
}
