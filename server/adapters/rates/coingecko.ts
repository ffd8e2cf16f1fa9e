/**
 * CoinGecko: `GET {base}/api/v3/simple/price?ids=<ids>&vs_currencies=<fiats>`, public. The
 * answer `{"bitcoin":{"usd":61234.5,"eur":57012.12},…}` has prices as JSON numbers, read as
 * their exact source text (lossless-json.rules.ts). A vs_currency CoinGecko does not support is
 * simply absent from the answer, so asking for every Kassa fiat is safe.
 */
import { FIAT, parsePrice, type Crypto, type Fiat } from './currencies.js';
import { getJson, isObject } from './http.js';
import {
  DEFAULT_TIMEOUT_MS,
  MalformedResponseError,
  type FetchResult,
  type Quote,
  type RateSource,
  type RateSourceError,
  type SourceOptions,
} from './quote.js';

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

export class CoinGeckoSource implements RateSource {
  readonly name = 'coingecko';
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private readonly fiats: readonly Fiat[];

  constructor(options: CoinGeckoOptions = {}) {
    this.baseUrl = (options.baseUrl ?? COINGECKO_DEFAULT_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
    this.fiats = options.fiats ?? FIAT;
  }

  async fetchQuotes(signal?: AbortSignal): Promise<FetchResult> {
    const entries = Object.entries(COINGECKO_IDS) as [Crypto, string][];
    const ids = entries.map(([, id]) => id).join(',');
    const vs = this.fiats.map((f) => f.toLowerCase()).join(',');
    const url = `${this.baseUrl}/api/v3/simple/price?ids=${ids}&vs_currencies=${vs}`;
    const body = await getJson(url, { source: this.name, timeoutMs: this.timeoutMs, signal });
    const at = this.now();
    if (!isObject(body)) throw new MalformedResponseError(this.name, 'not an object');
    const quotes: Quote[] = [];
    const errors: RateSourceError[] = [];
    for (const [crypto, id] of entries) {
      const prices = body[id];
      if (prices === undefined) continue;
      if (!isObject(prices)) {
        errors.push(new MalformedResponseError(this.name, `${id} is not an object`));
        continue;
      }
      for (const fiat of this.fiats) {
        const raw = prices[fiat.toLowerCase()];
        if (raw === undefined) continue;
        const price = parsePrice(raw);
        if (!price) {
          errors.push(new MalformedResponseError(this.name, `${id}.${fiat.toLowerCase()} = ${JSON.stringify(raw)}`));
          continue;
        }
        quotes.push({ source: this.name, base: crypto, quote: fiat, price: price.toString(), at });
      }
    }
    if (quotes.length === 0) throw errors[0] ?? new MalformedResponseError(this.name, 'no requested id in answer');
    return { quotes, errors };
  }
}
