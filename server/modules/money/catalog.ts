/**
 * The spec's tables as data (spec §2.1, §9 change history, CONTRACT §4–§6).
 *
 * Every enumeration, every currency→network pairing and every per-currency
 * precision lives here, typed `as const`, so that validation, pricing, the
 * OpenAPI document and the checkout all read the same source. Which
 * currency is carried on which network, and at what fee, is the network
 * families' (networks/families/): the tables here are derived from them.
 */
import { NETWORKS, NETWORK_RULES, type CarriedCurrency, type Network } from '../networks/families/index.js';

export const FIAT_CURRENCIES = [
  'AED', 'ARS', 'AUD', 'BDT', 'BGN', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP',
  'HKD', 'HRK', 'HUF', 'IDR', 'ILS', 'INR', 'ISK', 'JPY', 'KES', 'KRW', 'MXN', 'MYR', 'NOK', 'NZD',
  'PEN', 'PHP', 'PLN', 'QAR', 'RON', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'VND', 'ZAR',
] as const;
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export const CRYPTO_CURRENCIES = [
  'BCH', 'BNB', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'TRX', 'USDC', 'USDT', 'XLM', 'XRP',
] as const;
export type CryptoCurrency = (typeof CRYPTO_CURRENCIES)[number];

/** The networks are the network families' (networks/families/): described there once. */
export { NETWORKS, type Network } from '../networks/families/index.js';

export const SETTLEMENT_CURRENCIES = ['BTC', 'USDC', 'USDT', 'EUR', 'GBP', 'USD'] as const;
export type SettlementCurrency = (typeof SETTLEMENT_CURRENCIES)[number];

/** The currency every deposit is also valued in ("uniform" amounts). */
export const UNIFORM_CURRENCY = 'EUR' as const;

export const PAYMENT_TYPES = ['ONE_TIME', 'REUSABLE'] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
export const RATE_TYPES = ['FIXED', 'FLOATING'] as const;
export type RateType = (typeof RATE_TYPES)[number];
export const REDIRECT_MODES = ['PARENT', 'SELF'] as const;
export type RedirectMode = (typeof REDIRECT_MODES)[number];
export const OVERPAYMENT_POLICIES = ['PROCESS', 'EXCESS_REFUND'] as const;
export type OverpaymentPolicy = (typeof OVERPAYMENT_POLICIES)[number];

export const PAYMENT_STATUSES = [
  'NEW', 'PENDING', 'AWAITING', 'DEPOSITED', 'EXPIRED', 'BLOCKED', 'OVERPAID', 'UNPROCESSABLE', 'FAILED',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const DEPOSIT_STATUSES = [
  'COMPLIANCE_REVIEW', 'UNCONFIRMED', 'CONFIRMED', 'BLOCKED', 'UNPROCESSABLE', 'FAILED',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

export const REFUND_TYPES = ['PARTIAL', 'FULL'] as const;
export const REFUND_STATUSES = ['PENDING', 'CONFIRMED', 'NON_REFUNDABLE'] as const;
export const REFUND_REASONS = [
  'OVERPAYMENT', 'CURRENCY_MISMATCH', 'FOLLOW_UP_DEPOSIT', 'RESTRICTED_CURRENCY', 'ILLICIT_DEPOSIT',
] as const;

/** Languages the checkout speaks (spec §2.2 `locale`): shared with the widget. */
export { LANGUAGES, type Language } from './languages.rules.js';

/** API key scopes (CONTRACT §2). */
export const SCOPES = [
  'CREATE_PAYMENT', 'READ_PAYMENT', 'CREATE_WITHDRAWAL', 'READ_WITHDRAWAL', 'MANAGE_WHITELIST',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Currencies whose processing ended on 2022-07-15 (change of 2022-06-30). */
export const DELISTED_CURRENCIES = ['BAT', 'BNT', 'CVC', 'ENJ', 'MITH', 'MTL', 'OMG', 'REP'] as const;

/** ISO 4217 minor units of every supported fiat currency. */
export const FIAT_DECIMALS: Record<FiatCurrency, number> = {
  AED: 2, ARS: 2, AUD: 2, BDT: 2, BGN: 2, BRL: 2, CAD: 2, CHF: 2, CLP: 0, CNY: 2, CZK: 2, DKK: 2,
  EUR: 2, GBP: 2, HKD: 2, HRK: 2, HUF: 2, IDR: 2, ILS: 2, INR: 2, ISK: 0, JPY: 0, KES: 2, KRW: 0,
  MXN: 2, MYR: 2, NOK: 2, NZD: 2, PEN: 2, PHP: 2, PLN: 2, QAR: 2, RON: 2, SEK: 2, SGD: 2, THB: 2,
  TRY: 2, USD: 2, VND: 0, ZAR: 2,
};

/**
 * Decimals accepted for amounts of each cryptocurrency. Tokens use the
 * smallest precision they have on any of their networks (USDT is 6 on
 * ETH/TRX and 18 on BSC: 6 is exact everywhere).
 */
export const CRYPTO_DECIMALS: Record<CryptoCurrency, number> = {
  BCH: 8, BNB: 18, BTC: 8, ETH: 18, LINK: 18, LTC: 8, SOL: 9, TRX: 6, USDC: 6, USDT: 6, XLM: 7, XRP: 6,
};

/** A table with one entry per cryptocurrency. */
function byCurrency<V>(entry: (currency: CryptoCurrency) => V): Record<CryptoCurrency, V> {
  return Object.fromEntries(CRYPTO_CURRENCIES.map((currency) => [currency, entry(currency)])) as Record<CryptoCurrency, V>;
}

/** The networks that carry `currency` (and pass `keep`), those the spec added later last. */
function carriers(currency: CryptoCurrency, keep: (c: CarriedCurrency) => boolean): Network[] {
  const since = (n: Network) => NETWORK_RULES[n].currencies[currency]!.since ?? '';
  return NETWORKS.filter((n) => NETWORK_RULES[n].currencies[currency] && keep(NETWORK_RULES[n].currencies[currency]!)).sort(
    (a, b) => since(a).localeCompare(since(b)),
  );
}

/**
 * Deposit networks per currency: the currencies each network carries, as
 * its family says (networks/families/) — the 2022-09-26 table, plus SOL and
 * USDC on SOL from 2024-05-16. BNB and TRX are not shown by the spec; each is
 * accepted on its own chain (BNB on BSC, TRX on TRX), written down in the README.
 */
export const DEPOSIT_NETWORKS: Record<CryptoCurrency, readonly Network[]> = byCurrency((currency) =>
  carriers(currency, () => true),
);

/**
 * Withdrawal networks per payout currency (the networks marked `payout`):
 * the 2022-08-15 table (TRX added 2022-05-19), SOL and USDC on SOL from
 * 2024-05-16. `MAIN` is gone since 2022-08-21. Nine payout currencies before
 * SOL, ten since.
 */
export const WITHDRAWAL_NETWORKS: Partial<Record<CryptoCurrency, readonly Network[]>> = Object.fromEntries(
  CRYPTO_CURRENCIES.map((currency) => [currency, carriers(currency, (c) => c.payout !== undefined)] as const).filter(
    ([, networks]) => networks.length > 0,
  ),
);

/** Networks whose deposits to a shared address are told apart by a tag/memo. */
export const TAG_NETWORKS: readonly Network[] = NETWORKS.filter((n) => NETWORK_RULES[n].tag);

/** Stablecoins valued at a 1:1 peg against USD (their depeg loss is reported). */
export const USD_STABLECOINS: readonly CryptoCurrency[] = ['USDC', 'USDT'];

/** One number of each currency on each network that carries it, as its family states it. */
const perNetwork = (currency: CryptoCurrency, networks: readonly Network[], value: (carried: CarriedCurrency) => string) =>
  Object.fromEntries(networks.map((n) => [n, value(NETWORK_RULES[n].currencies[currency]!)])) as Partial<Record<Network, string>>;

/** Sandbox network fee per currency and network, in the currency (refund and withdrawal cost). */
export const NETWORK_FEES: Record<CryptoCurrency, Partial<Record<Network, string>>> = byCurrency((currency) =>
  perNetwork(currency, DEPOSIT_NETWORKS[currency], (c) => c.fee),
);

// A family that carries a currency Kassa does not know is a mistake in its table: refuse to start.
for (const network of NETWORKS) {
  for (const currency of Object.keys(NETWORK_RULES[network].currencies)) {
    if (!(CRYPTO_CURRENCIES as readonly string[]).includes(currency)) throw new Error(`Network ${network} carries unknown currency ${currency}.`);
  }
}

/**
 * Smallest deposit amount per currency and network (CONTRACT §4 `minAmount`):
 * a payment asking for less is refused with 422 AMOUNT_BELOW_MINIMUM. Each is
 * at least five times the network fee of a refund (NETWORK_FEES), so a
 * refunded deposit is never eaten by its fee, and above what the network
 * refuses or strands: the dust limit of an output (BTC, BCH, LTC 546
 * satoshi-units), the account reserve of XRP (1 XRP) and XLM (1 XLM), the
 * rent-exempt minimum of a Solana account (0.00089088 SOL).
 */
export const DEPOSIT_MIN_AMOUNTS: Record<CryptoCurrency, Partial<Record<Network, string>>> = byCurrency((currency) =>
  perNetwork(currency, DEPOSIT_NETWORKS[currency], (c) => c.min),
);

/**
 * Largest single withdrawal per payout currency and network (the 2022-08-21 change exposes it as
 * `maxAmount`; the spec does not show values, these are Kassa's).
 */
export const WITHDRAWAL_MAX_AMOUNTS: Partial<Record<CryptoCurrency, Partial<Record<Network, string>>>> = Object.fromEntries(
  Object.entries(WITHDRAWAL_NETWORKS).map(([currency, networks]) => [currency, perNetwork(currency as CryptoCurrency, networks, (c) => c.payout!.max)]),
);

/** What a chain refuses or strands below, in its native coin (dust, account reserve, rent): the minimums stay above it. */
export const NATIVE_FLOORS: Partial<Record<CryptoCurrency, string>> = {
  BTC: '0.00000546', BCH: '0.00000546', LTC: '0.00000546', XRP: '1', XLM: '1', SOL: '0.00089088',
};

/** The smallest payment in a currency on a network (DEPOSIT_MIN_AMOUNTS), as a decimal string. */
export function depositMinimum(currency: CryptoCurrency, network: Network): string | null {
  return DEPOSIT_MIN_AMOUNTS[currency][network] ?? null;
}

export const isFiat = (code: string): code is FiatCurrency => (FIAT_CURRENCIES as readonly string[]).includes(code);
export const isCrypto = (code: string): code is CryptoCurrency =>
  (CRYPTO_CURRENCIES as readonly string[]).includes(code);

/** Decimals for any currency Kassa prices (fiat or crypto). */
export function decimalsOf(code: FiatCurrency | CryptoCurrency): number {
  return isFiat(code) ? FIAT_DECIMALS[code] : CRYPTO_DECIMALS[code];
}

export type DelistedCurrency = (typeof DELISTED_CURRENCIES)[number];
/** Currencies a rates source prices: delisted tokens too, so that refunds of them can be shown in fiat. */
export type PricedCurrency = FiatCurrency | CryptoCurrency | DelistedCurrency;
/** Every currency a rates source must price. */
export const PRICED_CURRENCIES: readonly PricedCurrency[] = [...FIAT_CURRENCIES, ...CRYPTO_CURRENCIES];
