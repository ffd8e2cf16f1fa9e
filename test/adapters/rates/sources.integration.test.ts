/**
 * Each rate source against a local HTTP double replaying its provider's real format: the exact
 * request, the quotes parsed, and every failure as a typed error (errors, timeouts, 429,
 * malformed bodies), never a made-up quote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoinbaseSource } from '../../../server/adapters/rates/coinbase.js';
import { CoinGeckoSource } from '../../../server/adapters/rates/coingecko.js';
import { KrakenSource } from '../../../server/adapters/rates/kraken.js';
import {
  MalformedResponseError,
  ProviderError,
  RateLimitedError,
  RateSourceHttpError,
  RateSourceNetworkError,
  RateSourceTimeoutError,
  type Quote,
} from '../../../server/adapters/rates/quote.js';
import { COINGECKO_429, coinbaseError, coinbaseRates, krakenTicker, krakenTickerAnswer } from './fixtures.js';
import { startHttpDouble, type HttpDouble } from './http-double.js';

const AT = new Date('2026-11-23T12:00:00.000Z');
const now = () => AT;
const byPair = (quotes: Quote[]) => Object.fromEntries(quotes.map((q) => [`${q.base}/${q.quote}`, q.price]));

let double: HttpDouble;
beforeAll(async () => {
  double = await startHttpDouble();
});
afterAll(async () => {
  await double.close();
});
const reset = () => double.requests.splice(0);

describe('Coinbase GET /v2/exchange-rates?currency=<FIAT>', () => {
  // A generous timeout: a loaded machine must not turn a normal answer into a timeout.
  const source = () => new CoinbaseSource({ baseUrl: `${double.url}/`, fiats: ['EUR', 'USD'], now, timeoutMs: 5000 });

  it('asks once per fiat and inverts crypto-per-fiat into fiat-per-crypto, exactly', async () => {
    reset();
    double.answer((req) => {
      const currency = new URL(req.url, 'http://x').searchParams.get('currency')!;
      return currency === 'EUR'
        ? { body: coinbaseRates('EUR', { BTC: '0.00002', ETH: '0.0004', USDT: '1.0857', XRP: '2' }) }
        : { body: coinbaseRates('USD', { BTC: '0.000016', ETH: '0.0003125' }) };
    });
    const { quotes, errors } = await source().fetchQuotes();
    expect(double.requests.map((r) => r.url).sort()).toEqual(['/v2/exchange-rates?currency=EUR', '/v2/exchange-rates?currency=USD']);
    expect(errors).toEqual([]);
    expect(byPair(quotes)).toEqual({
      'BTC/EUR': '50000',
      'ETH/EUR': '2500',
      'XRP/EUR': '0.5',
      // 1 / 1.0857 to 30 significant digits (checked with Python's decimal at prec=30)
      'USDT/EUR': '0.921064750851984894538086027448',
      'BTC/USD': '62500',
      'ETH/USD': '3200',
    });
    expect(quotes.every((q) => q.source === 'coinbase' && q.at === AT)).toBe(true);
  });

  it('keeps the other fiats when one is refused, and reports the refusal', async () => {
    double.answer((req) =>
      req.url.endsWith('USD')
        ? { status: 400, body: coinbaseError('invalid_request', 'Invalid currency') }
        : { body: coinbaseRates('EUR', { BTC: '0.00002' }) },
    );
    const { quotes, errors } = await source().fetchQuotes();
    expect(byPair(quotes)).toEqual({ 'BTC/EUR': '50000' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RateSourceHttpError);
    expect((errors[0] as RateSourceHttpError).status).toBe(400);
  });

  it('429 → RateLimitedError with Retry-After seconds, no quotes', async () => {
    double.answer(() => ({ status: 429, headers: { 'retry-after': '17' }, body: coinbaseError('rate_limit_exceeded', 'Too many requests') }));
    const error = await source().fetchQuotes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterS).toBe(17);
  });

  it('a price that is not a positive decimal is left out and reported, never guessed', async () => {
    double.answer(() => ({ body: coinbaseRates('EUR', { BTC: 'abc', ETH: '-0.0004', LTC: '0', SOL: '0.01' }) }));
    const s = new CoinbaseSource({ baseUrl: double.url, fiats: ['EUR'], now });
    const { quotes, errors } = await s.fetchQuotes();
    expect(byPair(quotes)).toEqual({ 'SOL/EUR': '100' });
    expect(errors.map((e) => e.constructor)).toEqual([MalformedResponseError, MalformedResponseError, MalformedResponseError]);
    expect(errors.map((e) => e.message).join()).toMatch(/rates\.BTC.*rates\.ETH.*rates\.LTC/);
  });

  it('malformed bodies → MalformedResponseError (HTML, no data.rates, wrong currency)', async () => {
    for (const body of ['<html>gateway</html>', { data: {} }, { data: { currency: 'USD', rates: { BTC: '0.1' } } }]) {
      double.answer(() => ({ body }));
      const s = new CoinbaseSource({ baseUrl: double.url, fiats: ['EUR'], now });
      await expect(s.fetchQuotes()).rejects.toBeInstanceOf(MalformedResponseError);
    }
  });

  it('a provider that does not answer in time → RateSourceTimeoutError', async () => {
    double.answer(() => ({ delayMs: 2000, body: coinbaseRates('EUR', { BTC: '0.00002' }) }));
    const s = new CoinbaseSource({ baseUrl: double.url, fiats: ['EUR'], now, timeoutMs: 150 });
    const started = Date.now();
    const error = await s.fetchQuotes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateSourceTimeoutError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('nobody listening → RateSourceNetworkError', async () => {
    const gone = await startHttpDouble();
    const url = gone.url;
    await gone.close();
    const s = new CoinbaseSource({ baseUrl: url, fiats: ['EUR'], now });
    await expect(s.fetchQuotes()).rejects.toBeInstanceOf(RateSourceNetworkError);
  });
});

describe('Kraken GET /0/public/Ticker?pair=<PAIRS>', () => {
  const pairs = [
    { base: 'BTC', quote: 'EUR' },
    { base: 'ETH', quote: 'USD' },
    { base: 'SOL', quote: 'EUR' },
    { base: 'USDT', quote: 'USD' },
    { base: 'XRP', quote: 'EUR' },
  ] as const;
  // A generous timeout: a loaded machine must not turn a normal answer into a timeout.
  const source = () => new KrakenSource({ baseUrl: double.url, pairs, now, timeoutMs: 5000 });

  it('asks the altnames and reads c[0] under legacy (XXBTZEUR), plain (SOLEUR) and mixed (USDTZUSD) keys', async () => {
    reset();
    double.answer(() => ({
      body: krakenTickerAnswer({ XXBTZEUR: '57012.10000', XETHZUSD: '3150.42000', SOLEUR: '140.1200', USDTZUSD: '1.00020000' }),
    }));
    const { quotes, errors } = await source().fetchQuotes();
    expect(double.requests.map((r) => r.url)).toEqual(['/0/public/Ticker?pair=XBTEUR,ETHUSD,SOLEUR,USDTUSD,XRPEUR']);
    expect(errors).toEqual([]);
    // XRPEUR absent from the answer: no quote rather than a guess
    expect(byPair(quotes)).toEqual({ 'BTC/EUR': '57012.1', 'ETH/USD': '3150.42', 'SOL/EUR': '140.12', 'USDT/USD': '1.0002' });
  });

  it('a non-empty error array → ProviderError; a warning alone does not void the result', async () => {
    double.answer(() => ({ body: { error: ['EQuery:Unknown asset pair'] } }));
    const error = await source().fetchQuotes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).errors).toEqual(['EQuery:Unknown asset pair']);

    double.answer(() => ({ body: { error: ['EAPI:Rate limit exceeded'] } }));
    await expect(source().fetchQuotes()).rejects.toThrow(/EAPI:Rate limit exceeded/);

    double.answer(() => ({ body: { error: ['WGeneral:Some warning'], result: { XXBTZEUR: krakenTicker('57000.0') } } }));
    expect(byPair((await source().fetchQuotes()).quotes)).toEqual({ 'BTC/EUR': '57000' });
  });

  it('a delisted pair is found by asking pair by pair, reported, and left out of later rounds', async () => {
    reset();
    // Kraken refuses any request naming XRPEUR, as it does for a pair it does not list.
    double.answer((req) =>
      req.url.includes('XRPEUR')
        ? { body: { error: ['EQuery:Unknown asset pair'] } }
        : { body: krakenTickerAnswer({ XXBTZEUR: '57000.0', XETHZUSD: '3100.0', SOLEUR: '140.0', USDTZUSD: '1.0001' }) },
    );
    const kraken = source();
    const first = await kraken.fetchQuotes();
    expect(Object.keys(byPair(first.quotes)).sort()).toEqual(['BTC/EUR', 'ETH/USD', 'SOL/EUR', 'USDT/USD']);
    expect(first.errors.map((e) => e.message)).toEqual(['kraken: provider error: EQuery:Unknown asset pair']);
    // one combined request, then one per pair
    expect(double.requests.map((r) => r.url.split('pair=')[1])).toEqual(['XBTEUR,ETHUSD,SOLEUR,USDTUSD,XRPEUR', 'XBTEUR', 'ETHUSD', 'SOLEUR', 'USDTUSD', 'XRPEUR']);
    reset();
    const second = await kraken.fetchQuotes();
    expect(second.errors).toEqual([]);
    expect(double.requests.map((r) => r.url.split('pair=')[1])).toEqual(['XBTEUR,ETHUSD,SOLEUR,USDTUSD']);
  });

  it('429 with an HTTP-date Retry-After → RateLimitedError with the seconds until then', async () => {
    const inFiveMinutes = new Date(Date.now() + 300_000).toUTCString();
    double.answer(() => ({ status: 429, headers: { 'retry-after': inFiveMinutes }, body: { error: ['EGeneral:Too many requests'] } }));
    const error = (await source().fetchQuotes().catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterS).toBeGreaterThan(290);
    expect(error.retryAfterS).toBeLessThanOrEqual(300);
  });

  it('HTTP 502 → RateSourceHttpError; malformed tickers are reported, not quoted', async () => {
    double.answer(() => ({ status: 502, body: '<html>Bad Gateway</html>' }));
    const http = (await source().fetchQuotes().catch((e: unknown) => e)) as RateSourceHttpError;
    expect(http).toBeInstanceOf(RateSourceHttpError);
    expect(http.status).toBe(502);

    double.answer(() => ({ body: { result: {} } }));
    await expect(source().fetchQuotes()).rejects.toBeInstanceOf(MalformedResponseError);

    double.answer(() => ({ body: { error: [], result: { XXBTZEUR: { c: 'oops' }, SOLEUR: krakenTicker('140.5') } } }));
    const { quotes, errors } = await source().fetchQuotes();
    expect(byPair(quotes)).toEqual({ 'SOL/EUR': '140.5' });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/XXBTZEUR\.c\[0\]/);

    double.answer(() => ({ body: { error: [], result: {} } }));
    await expect(source().fetchQuotes()).rejects.toBeInstanceOf(MalformedResponseError);
  });

  it('timeout → RateSourceTimeoutError', async () => {
    double.answer(() => ({ delayMs: 2000, body: krakenTickerAnswer({ XXBTZEUR: '1' }) }));
    await expect(new KrakenSource({ baseUrl: double.url, pairs, timeoutMs: 100 }).fetchQuotes()).rejects.toBeInstanceOf(
      RateSourceTimeoutError,
    );
  });
});

describe('CoinGecko GET /api/v3/simple/price?ids=<ids>&vs_currencies=<fiats>', () => {
  // A generous timeout: a loaded machine must not turn a normal answer into a timeout.
  const source = () => new CoinGeckoSource({ baseUrl: double.url, fiats: ['EUR', 'USD', 'QAR'], now, timeoutMs: 5000 });

  it('asks the twelve ids and the fiats, and keeps every digit of the JSON numbers', async () => {
    reset();
    // Raw JSON text: 61880.123456789012345 has more digits than a double holds.
    double.answer(() => ({
      headers: { 'content-type': 'application/json' },
      body: '{"bitcoin":{"eur":57012.12,"usd":61880.123456789012345},"tether":{"eur":0.921456,"usd":1.0003},"tron":{"eur":1.2e-1}}',
    }));
    const { quotes, errors } = await source().fetchQuotes();
    const url = new URL(double.requests[0]!.url, 'http://x');
    expect(url.pathname).toBe('/api/v3/simple/price');
    expect(url.searchParams.get('ids')!.split(',').sort()).toEqual(
      ['binancecoin', 'bitcoin', 'bitcoin-cash', 'chainlink', 'ethereum', 'litecoin', 'ripple', 'solana', 'stellar', 'tether', 'tron', 'usd-coin'],
    );
    expect(url.searchParams.get('vs_currencies')).toBe('eur,usd,qar');
    expect(errors).toEqual([]);
    expect(byPair(quotes)).toEqual({
      'BTC/EUR': '57012.12',
      'BTC/USD': '61880.123456789012345',
      'USDT/EUR': '0.921456',
      'USDT/USD': '1.0003',
      'TRX/EUR': '0.12',
    });
  });

  it('429 with its JSON status body → RateLimitedError carrying Retry-After', async () => {
    double.answer(() => ({ status: 429, headers: { 'retry-after': '60' }, body: COINGECKO_429 }));
    const error = (await source().fetchQuotes().catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterS).toBe(60);
  });

  it('null and string prices are reported, not quoted; an empty or non-object answer is malformed', async () => {
    double.answer(() => ({ body: '{"bitcoin":{"eur":null,"usd":"61000"},"ethereum":{"eur":2900.5}}' }));
    const { quotes, errors } = await source().fetchQuotes();
    // "61000" as a JSON string is not CoinGecko's format, but still a positive decimal: kept.
    expect(byPair(quotes)).toEqual({ 'BTC/USD': '61000', 'ETH/EUR': '2900.5' });
    expect(errors.map((e) => e.message)).toEqual(['coingecko: malformed response: bitcoin.eur = null']);

    for (const body of ['{}', '[1,2]', 'not json', '{"bitcoin":42}']) {
      double.answer(() => ({ body }));
      await expect(source().fetchQuotes()).rejects.toBeInstanceOf(MalformedResponseError);
    }
  });

  it('HTTP 500 → RateSourceHttpError; timeout → RateSourceTimeoutError', async () => {
    double.answer(() => ({ status: 500, body: { error: 'internal' } }));
    await expect(source().fetchQuotes()).rejects.toBeInstanceOf(RateSourceHttpError);
    double.answer(() => ({ delayMs: 2000, body: { bitcoin: { eur: 1 } } }));
    await expect(new CoinGeckoSource({ baseUrl: double.url, timeoutMs: 100 }).fetchQuotes()).rejects.toBeInstanceOf(RateSourceTimeoutError);
  });
});
