/**
 * CoinGecko: `GET {base}/api/v3/simple/price?ids=<ids>&vs_currencies=<fiats>`, public. The
 * answer `{"bitcoin":{"usd":61234.5,"eur":57012.12},…}` has prices as JSON numbers, read as
 * their exact source text (lossless-json.rules.ts). A vs_currency CoinGecko does not support is
 * simply absent from the answer, so asking for every Kassa fiat is safe.
 */
import { FIAT, type Crypto, type Fiat } from './currencies.js';
import { isObject } from './http.js';
import { HttpRateSource, type RawPrice } from './http-source.js';
import { MalformedResponseError, type FetchResult, type RateSourceError, type SourceOptions } from './quote.js';

export const COINGECKO_DEFAULT_URL = 'https://api.coingecko.com';

/** CoinGecko coin ids of the Kassa cryptos (§11). */
export const COINGECKO_IDS: Record<Crypto, string> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  USDT: 'tether',
  USDC: 'usd-coin',
  LTC: 'litecoin',
  BCH: 'bitcoin-cash',
  XRP: 'ripple',
  XLM: 'stellar',
  LINK: 'chainlink',
  SOL: 'solana',
  BNB: 'binancecoin',
  TRX: 'tron',
};

export type CoinGeckoOptions = SourceOptions & { fiats?: readonly Fiat[] };

export class CoinGeckoSource extends HttpRateSource<CoinGeckoOptions> {
  constructor(options: CoinGeckoOptions = {}) {
    super('coingecko', options, COINGECKO_DEFAULT_URL);
  }

  async fetchQuotes(signal?: AbortSignal): Promise<FetchResult> {
    const fiats = this.options.fiats ?? FIAT;
    const entries = Object.entries(COINGECKO_IDS) as [Crypto, string][];
    const ids = entries.map(([, id]) => id).join(',');
    const vs = fiats.map((f) => f.toLowerCase()).join(',');
    const { body, at } = await this.get(`/api/v3/simple/price?ids=${ids}&vs_currencies=${vs}`, signal);
    if (!isObject(body)) throw new MalformedResponseError(this.name, 'not an object');
    const found: RawPrice[] = [];
    const errors: RateSourceError[] = [];
    for (const [crypto, id] of entries) {
      const prices = body[id];
      if (prices === undefined) continue;
      if (!isObject(prices)) {
        errors.push(new MalformedResponseError(this.name, `${id} is not an object`));
        continue;
      }
      for (const fiat of fiats) {
        const raw = prices[fiat.toLowerCase()];
        if (raw !== undefined) found.push({ base: crypto, quote: fiat, raw, where: `${id}.${fiat.toLowerCase()}` });
      }
    }
    return this.atLeastOne(this.read(found, at, errors), 'no requested id in answer');
  }
}
