/**
 * The §11 rates variables, validated, and the engine built from them. The lead may fold the
 * schema into the app's one config schema; `createLiveRatesEngine` is what main.ts calls.
 *
 *   KASSA_RATE_SOURCES        coinbase,kraken,coingecko (default: all three)
 *   KASSA_RATES_<SOURCE>_URL  base URL of a source (proxy or test double)
 *   KASSA_RATES_REFRESH_S     seconds between rounds of a source (default 30)
 *   KASSA_RATES_MIN_SOURCES   quorum (default 2; at most the number of sources)
 *   KASSA_RATES_MAX_AGE_S     age limit of a quote (default 120)
 */
import { z } from 'zod';
import { CoinbaseSource, COINBASE_DEFAULT_URL } from './coinbase.js';
import { CoinGeckoSource, COINGECKO_DEFAULT_URL } from './coingecko.js';
import { KrakenSource, KRAKEN_DEFAULT_URL } from './kraken.js';
import { LiveRates } from './live-rates.js';
import type { RateSource } from './quote.js';
import { RatesRefresher, type RefresherEvent } from './refresher.js';
import type { Sql } from './store.js';

export const RATE_SOURCE_NAMES = ['coinbase', 'kraken', 'coingecko'] as const;
export type RateSourceName = (typeof RATE_SOURCE_NAMES)[number];

const DEFAULT_URLS: Record<RateSourceName, string> = {
  coinbase: COINBASE_DEFAULT_URL,
  kraken: KRAKEN_DEFAULT_URL,
  coingecko: COINGECKO_DEFAULT_URL,
};

export type RatesConfig = {
  sources: { name: RateSourceName; baseUrl: string }[];
  refreshS: number;
  minSources: number;
  maxAgeS: number;
};

const positiveInt = z.coerce.number().int().positive();
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** Read and check the variables; throws an Error naming the first bad variable. */
export function ratesConfigFromEnv(env: Record<string, string | undefined>): RatesConfig {
  const fail = (variable: string, message: string): never => {
    throw new Error(`${variable}: ${message}`);
  };
  const parse = <T>(variable: string, schema: z.ZodType<T>, fallback: T): T => {
    const raw = env[variable];
    if (raw === undefined || raw === '') return fallback;
    const r = schema.safeParse(raw);
    return r.success ? r.data : fail(variable, r.error.issues[0]?.message ?? 'invalid');
  };
  const names = (env.KASSA_RATE_SOURCES ?? RATE_SOURCE_NAMES.join(','))
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) fail('KASSA_RATE_SOURCES', 'names no source');
  for (const n of names) {
    if (!(RATE_SOURCE_NAMES as readonly string[]).includes(n)) fail('KASSA_RATE_SOURCES', `unknown source "${n}" (known: ${RATE_SOURCE_NAMES.join(', ')})`);
  }
  if (new Set(names).size !== names.length) fail('KASSA_RATE_SOURCES', 'names a source twice');
  const sources = (names as RateSourceName[]).map((name) => {
    const variable = `KASSA_RATES_${name.toUpperCase()}_URL`;
    return { name, baseUrl: parse(variable, httpUrl, DEFAULT_URLS[name]).replace(/\/+$/, '') };
  });
  const minSources = parse('KASSA_RATES_MIN_SOURCES', positiveInt, 2);
  // A quorum larger than the sources can never be met: every price would be refused.
  if (minSources > sources.length) fail('KASSA_RATES_MIN_SOURCES', `is ${minSources} but only ${sources.length} source(s) configured`);
  return {
    sources,
    refreshS: parse('KASSA_RATES_REFRESH_S', positiveInt, 30),
    minSources,
    maxAgeS: parse('KASSA_RATES_MAX_AGE_S', positiveInt, 120),
  };
}

export function buildSource(name: RateSourceName, baseUrl: string, options: { timeoutMs?: number; now?: () => Date } = {}): RateSource {
  switch (name) {
    case 'coinbase':
      return new CoinbaseSource({ baseUrl, ...options });
    case 'kraken':
      return new KrakenSource({ baseUrl, ...options });
    case 'coingecko':
      return new CoinGeckoSource({ baseUrl, ...options });
  }
}

/**
 * The rates engine: `rates` for web processes (rate/quote/pegged/status), `refresher` for the
 * process that fetches (start() in the worker role, stop() on SIGTERM). Unavailable answers
 * carry the refresh interval as their Retry-After.
 */
export function createLiveRatesEngine(
  sql: Sql,
  config: RatesConfig,
  options: { now?: () => Date; timeoutMs?: number; onEvent?: (e: RefresherEvent) => void } = {},
): { rates: LiveRates; refresher: RatesRefresher } {
  const sources = config.sources.map((s) => buildSource(s.name, s.baseUrl, { timeoutMs: options.timeoutMs, now: options.now }));
  const rates = new LiveRates({
    sql,
    sources: config.sources.map((s) => s.name),
    policy: { minSources: config.minSources, maxAgeS: config.maxAgeS, retryAfterS: config.refreshS },
    now: options.now,
  });
  const refresher = new RatesRefresher({ sql, sources, refreshS: config.refreshS, now: options.now, onEvent: options.onEvent });
  return { rates, refresher };
}
