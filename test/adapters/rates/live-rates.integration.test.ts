/**
 * The refresher, the store and LiveRates against real PostgreSQL and two provider doubles
 * (Coinbase and Kraken formats): the EUR rate is their median with both sources recorded; one
 * source down past the age limit → RatesUnavailable; the background loop's schedule, backoff,
 * single flight, shared rounds and stop().
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoinbaseSource } from '../../../server/adapters/rates/coinbase.js';
import { KrakenSource } from '../../../server/adapters/rates/kraken.js';
import { LiveRates } from '../../../server/adapters/rates/live-rates.js';
import { createLiveRatesEngine, ratesConfigFromEnv } from '../../../server/adapters/rates/config.js';
import { RatesUnavailable } from '../../../server/adapters/rates/quorum.rules.js';
import { RatesRefresher, type RefresherEvent } from '../../../server/adapters/rates/refresher.js';
import { loadQuotes, saveQuotes } from '../../../server/adapters/rates/store.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { coinbaseRates, krakenTickerAnswer } from './fixtures.js';
import { startHttpDouble, type HttpDouble } from './http-double.js';

let db: TestDatabase;
let coinbase: HttpDouble;
let kraken: HttpDouble;
const started: RatesRefresher[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  coinbase = await startHttpDouble();
  kraken = await startHttpDouble();
});
afterAll(async () => {
  await Promise.all(started.map((r) => r.stop()));
  await coinbase?.close();
  await kraken?.close();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const reset = async () => {
  await db.sql`truncate rate_quotes, rate_sources`;
  coinbase.requests.splice(0);
  kraken.requests.splice(0);
};

describe('two sources, one store, one rate', () => {
  let clock = new Date('2026-11-23T12:00:00.000Z');
  const now = () => clock;
  const advance = (s: number) => {
    clock = new Date(clock.getTime() + s * 1000);
  };
  const sources = () => [
    new CoinbaseSource({ baseUrl: coinbase.url, fiats: ['EUR'], now, timeoutMs: 5000 }),
    new KrakenSource({ baseUrl: kraken.url, pairs: [{ base: 'BTC', quote: 'EUR' }], now, timeoutMs: 5000 }),
  ];
  const live = () => new LiveRates({ sql: db.sql, sources: ['coinbase', 'kraken'], now, cacheMs: 0 });

  it('an EUR rate is the median of both doubles, and both sources are recorded with it', async () => {
    await reset();
    coinbase.answer(() => ({ body: coinbaseRates('EUR', { BTC: '0.00002' }) })); // 50 000 EUR
    kraken.answer(() => ({ body: krakenTickerAnswer({ XXBTZEUR: '50400.00000' }) }));
    const refresher = new RatesRefresher({ sql: db.sql, sources: sources(), now });
    const events = await refresher.refreshAll();
    expect(events.map((e) => e.type)).toEqual(['refreshed', 'refreshed']);

    const stored = await db.sql`select source, base, quote, price::text, fetched_at from rate_quotes order by source`;
    expect(stored.map((r) => [r.source, r.base, r.quote, r.price])).toEqual([
      ['coinbase', 'BTC', 'EUR', '50000'],
      ['kraken', 'BTC', 'EUR', '50400'],
    ]);

    const rates = live();
    const q = await rates.quote('BTC', 'EUR');
    expect(q.rate.toString()).toBe('50200');
    expect(q.at).toEqual(clock);
    expect(q.legs[0]!.used.map((u) => [u.source, u.price])).toEqual([
      ['coinbase', '50000'],
      ['kraken', '50400'],
    ]);
    expect((await rates.rate('EUR', 'BTC')).toString()).toBe('0.0000199203187250996015936254980079681274900398406374501992031873') // 1/50200 at 60 digits (Python decimal);

    const status = await rates.status();
    expect(status.sources.map((s) => [s.name, s.fresh, s.ageS, s.quotes])).toEqual([
      ['coinbase', true, 0, 1],
      ['kraken', true, 0, 1],
    ]);
  });

  it('one source down past the age limit → RatesUnavailable with Retry-After; back when it recovers', async () => {
    kraken.answer(() => ({ status: 503, body: '<html>Service Unavailable</html>' }));
    advance(60);
    const e1 = await new RatesRefresher({ sql: db.sql, sources: sources(), now }).refreshAll();
    expect(e1.map((e) => e.type).sort()).toEqual(['failed', 'refreshed']);
    // Kraken's quote is 60 s old: still inside the 120 s limit.
    expect((await live().rate('BTC', 'EUR')).toString()).toBe('50200');

    advance(60); // Kraken's last quote is now exactly 120 s old: stale
    await new RatesRefresher({ sql: db.sql, sources: sources(), now }).refreshAll();
    const error = await live()
      .rate('BTC', 'EUR')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RatesUnavailable);
    expect((error as RatesUnavailable).retryAfterS).toBe(30);
    expect((error as RatesUnavailable).failures).toEqual([{ base: 'BTC', quote: 'EUR', reason: 'too_few_fresh', fresh: 1 }]);

    const status = await live().status();
    const k = status.sources.find((s) => s.name === 'kraken')!;
    expect(k).toMatchObject({ fresh: false, ageS: 120, consecutiveFailures: 2 });
    expect(k.lastError).toMatch(/HTTP 503/);
    expect(status.sources.find((s) => s.name === 'coinbase')).toMatchObject({ fresh: true, ageS: 0 });

    kraken.answer(() => ({ body: krakenTickerAnswer({ XXBTZEUR: '50100.0' }) }));
    await new RatesRefresher({ sql: db.sql, sources: sources(), now }).refreshAll();
    expect((await live().rate('BTC', 'EUR')).toString()).toBe('50050');
    expect((await live().status()).sources.find((s) => s.name === 'kraken')).toMatchObject({ consecutiveFailures: 0, lastError: null });
  });

  it('the store keeps the newer quote when an older round lands late', async () => {
    await reset();
    const t = new Date('2026-11-23T13:00:00Z');
    await saveQuotes(db.sql, [{ source: 'x', base: 'BTC', quote: 'EUR', price: '2', at: t }]);
    await saveQuotes(db.sql, [{ source: 'x', base: 'BTC', quote: 'EUR', price: '1', at: new Date(t.getTime() - 1000) }]);
    const quotes = await loadQuotes(db.sql, new Date(0));
    expect(quotes.map((q) => [q.price, q.at.toISOString()])).toEqual([['2', t.toISOString()]]);
  });
});

describe('built from the §11 variables', () => {
  it('KASSA_RATE_SOURCES and KASSA_RATES_<SOURCE>_URL reach the doubles; Retry-After is the refresh interval', async () => {
    await reset();
    coinbase.answer((req) =>
      req.url === '/v2/exchange-rates?currency=EUR' ? { body: coinbaseRates('EUR', { BTC: '0.00002' }) } : { body: coinbaseRates('X', {}) },
    );
    kraken.answer(() => ({ body: krakenTickerAnswer({ XXBTZEUR: '50400.00000', XETHZUSD: '3000.0' }) }));
    const config = ratesConfigFromEnv({
      KASSA_RATE_SOURCES: 'coinbase,kraken',
      KASSA_RATES_COINBASE_URL: coinbase.url,
      KASSA_RATES_KRAKEN_URL: kraken.url,
      KASSA_RATES_REFRESH_S: '15',
    });
    const { rates, refresher } = createLiveRatesEngine(db.sql, config);
    const events = await refresher.refreshAll();
    // Coinbase: one request per fiat (40), only EUR answered with a BTC rate; Kraken: one request.
    expect(coinbase.requests).toHaveLength(40);
    expect(kraken.requests).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(['refreshed', 'refreshed']);
    expect((await rates.rate('BTC', 'EUR')).toString()).toBe('50200');
    const error = (await rates.rate('ETH', 'USD').catch((e: unknown) => e)) as RatesUnavailable;
    expect(error).toBeInstanceOf(RatesUnavailable);
    expect(error.retryAfterS).toBe(15);
  });
});

describe('the background loop', () => {
  const start = (refresher: RatesRefresher) => {
    started.push(refresher);
    refresher.start();
    return refresher;
  };

  it('refreshes on schedule with at most one request in flight per source', async () => {
    await reset();
    let inFlight = 0;
    let maxInFlight = 0;
    // Each answer takes 150 ms while the schedule asks every 50 ms: rounds must not overlap.
    coinbase.answer(() => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => inFlight--, 150);
      return { delayMs: 150, body: coinbaseRates('EUR', { BTC: '0.00002' }) };
    });
    const refresher = start(
      new RatesRefresher({
        sql: db.sql,
        sources: [new CoinbaseSource({ baseUrl: coinbase.url, fiats: ['EUR'], timeoutMs: 2000 })],
        refreshS: 0.05,
      }),
    );
    await sleep(1000);
    await refresher.stop();
    // A request the client aborted may still reach the double a moment later (a loaded machine): count after it lands.
    await sleep(100);
    const requests = coinbase.requests.length;
    await sleep(300);
    expect(maxInFlight).toBe(1);
    // 1 s of rounds of ≥150 ms + ~50 ms: a handful (5 on an idle machine), never the 20 a 50 ms timer alone would make.
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(requests).toBeLessThanOrEqual(7);
    expect(coinbase.requests.length).toBe(requests); // nothing after stop
    expect((await loadQuotes(db.sql, new Date(0))).length).toBe(1);
  });

  it('stop() aborts a round in flight and resolves once idle, storing nothing of it', async () => {
    await reset();
    coinbase.answer(() => ({ delayMs: 5000, body: coinbaseRates('EUR', { BTC: '0.00002' }) }));
    const events: RefresherEvent[] = [];
    const refresher = start(
      new RatesRefresher({
        sql: db.sql,
        sources: [new CoinbaseSource({ baseUrl: coinbase.url, fiats: ['EUR'], timeoutMs: 10_000 })],
        refreshS: 30,
        onEvent: (e) => events.push(e),
      }),
    );
    await sleep(300);
    expect(coinbase.requests).toHaveLength(1); // the provider is holding the request
    const t0 = Date.now();
    await refresher.stop();
    expect(Date.now() - t0).toBeLessThan(1000); // not the 5 s the provider would take
    expect(events.map((e) => e.type)).toEqual(['failed']); // the aborted round ended before stop() resolved
    expect(await loadQuotes(db.sql, new Date(0))).toEqual([]);
    // An abort by stop() is not the provider's failure: no failure recorded.
    const [row] = await db.sql`select consecutive_failures from rate_sources where source = 'coinbase'`;
    expect(row!.consecutive_failures).toBe(0);
  });

  it('backs off exponentially after failures, and waits at least Retry-After on 429', async () => {
    await reset();
    kraken.answer(() => ({ status: 500, body: { error: ['EService:Unavailable'] } }));
    const events: RefresherEvent[] = [];
    const refresher = start(
      new RatesRefresher({
        sql: db.sql,
        sources: [new KrakenSource({ baseUrl: kraken.url, pairs: [{ base: 'BTC', quote: 'EUR' }] })],
        refreshS: 0.1,
        jitter: 0,
        onEvent: (e) => events.push(e),
      }),
    );
    await sleep(1200);
    await refresher.stop();
    const failures = events.filter((e) => e.type === 'failed');
    // Rounds at 0, 0.2, 0.6 s; the next would be at 1.4 s. Without backoff there would be ~12.
    expect(kraken.requests.length).toBe(3);
    expect(failures.map((e) => e.type === 'failed' && e.nextInMs)).toEqual([200, 400, 800]);

    await reset();
    kraken.answer(() => ({ status: 429, headers: { 'retry-after': '5' }, body: { error: ['EAPI:Rate limit exceeded'] } }));
    events.splice(0);
    const limited = start(
      new RatesRefresher({
        sql: db.sql,
        sources: [new KrakenSource({ baseUrl: kraken.url, pairs: [{ base: 'BTC', quote: 'EUR' }] })],
        refreshS: 0.1,
        jitter: 0,
        onEvent: (e) => events.push(e),
      }),
    );
    await sleep(500);
    await limited.stop();
    expect(kraken.requests.length).toBe(1);
    expect(events).toMatchObject([{ type: 'failed', nextInMs: 5000 }]);
    const [row] = await db.sql`select consecutive_failures, last_error from rate_sources where source = 'kraken'`;
    expect(row).toMatchObject({ consecutive_failures: 1 });
    expect(row!.last_error).toMatch(/429.*retry after 5 s/);
  });

  it('two processes share one schedule: a round claimed by one is skipped by the other', async () => {
    await reset();
    coinbase.answer(() => ({ body: coinbaseRates('EUR', { BTC: '0.00002' }) }));
    const make = () =>
      start(
        new RatesRefresher({
          sql: db.sql,
          sources: [new CoinbaseSource({ baseUrl: coinbase.url, fiats: ['EUR'] })],
          refreshS: 2,
        }),
      );
    const a = make();
    const b = make();
    await sleep(3000);
    await Promise.all([a.stop(), b.stop()]);
    // Rounds at ~0 s and ~2 s (±10 %; the next no sooner than 3.6 s), each claimed once: 2 requests, not 4.
    expect(coinbase.requests.length).toBe(2);
  });
});
