/**
 * Money: amount parsing and formatting, the fee formulas of CONTRACT §5,
 * pricing against the sandbox rate table, and the currency/network tables
 * of the spec. Every expected value is computed by hand in the comment
 * beside it, never by calling the code under test.
 */
import { describe, expect, it } from 'vitest';
import {
  CRYPTO_CURRENCIES, DEPOSIT_NETWORKS, FIAT_CURRENCIES, WITHDRAWAL_NETWORKS, type CryptoCurrency, type FiatCurrency,
} from '../../../server/modules/money/catalog.js';
import { Dec, MAX_AMOUNT, formatAmount, parseAmount, roundTo } from '../../../server/modules/money/decimal.js';
import { splitDeposit, userFeeOnTop } from '../../../server/modules/money/fees.rules.js';
import { SANDBOX_EUR_VALUES, SandboxRates } from '../../../server/adapters/rates/sandbox.js';
import { PRICED_CURRENCIES } from '../../../server/modules/money/index.js';
import { priceCrypto, priceFiat, priceInCrypto } from '../../../server/modules/payments/pricing.js';

const AT = new Date('2026-11-22T12:00:00.000Z');
const rates = new SandboxRates();
const fees = (serviceFeePercent: string, userFeeSharePercent: string) => ({ serviceFeePercent, userFeeSharePercent });

function parsed(text: string, decimals: number): string {
  const result = parseAmount(text, decimals);
  if (!result.ok) throw new Error(`expected ${text} to parse, got ${result.problem}`);
  return result.value.toFixed();
}
function problem(text: string, decimals: number): string {
  const result = parseAmount(text, decimals);
  return result.ok ? `parsed as ${result.value.toFixed()}` : result.problem;
}

describe('parseAmount', () => {
  it('accepts plain positive decimals and keeps their exact value', () => {
    expect(parsed('10', 2)).toBe('10');
    expect(parsed('10.5', 2)).toBe('10.5');
    expect(parsed('10.50', 2)).toBe('10.5');
    expect(parsed('0.01', 2)).toBe('0.01');
    expect(parsed('0.00000001', 8)).toBe('0.00000001');
    expect(parsed('0.000000000000000001', 18)).toBe('0.000000000000000001');
    expect(parsed('100', 0)).toBe('100');
    // No floating point: 0.1 + 0.2 is exactly 0.3.
    const a = parseAmount('0.1', 1);
    const b = parseAmount('0.2', 1);
    expect(a.ok && b.ok && a.value.add(b.value).toFixed()).toBe('0.3');
  });

  it('refuses anything but a plain decimal string (FORMAT)', () => {
    for (const text of ['', ' ', '1 ', ' 1', '.5', '5.', '01', '00.5', '+1', '-1', '-0.5', '1e3', '1E-2', '1,50', '1.2.3',
      '0x10', 'NaN', 'Infinity', '١٢', '1_000', '10 EUR']) {
      expect(problem(text, 8), JSON.stringify(text)).toBe('FORMAT');
    }
  });

  it('refuses more fraction digits than the currency has (TOO_MANY_DECIMALS)', () => {
    expect(problem('10.505', 2)).toBe('TOO_MANY_DECIMALS');
    expect(problem('100.0', 0)).toBe('TOO_MANY_DECIMALS');
    expect(problem('100.00', 0)).toBe('TOO_MANY_DECIMALS');
    expect(problem('0.000000001', 8)).toBe('TOO_MANY_DECIMALS');
    // Trailing zeros count as digits too: "10.500" is 3 decimals.
    expect(problem('10.500', 2)).toBe('TOO_MANY_DECIMALS');
  });

  it('refuses zero (NOT_POSITIVE) and negatives', () => {
    expect(problem('0', 2)).toBe('NOT_POSITIVE');
    expect(problem('0.00', 2)).toBe('NOT_POSITIVE');
    expect(problem('0.00000000', 8)).toBe('NOT_POSITIVE');
    expect(['FORMAT', 'NOT_POSITIVE']).toContain(problem('-5', 2));
    expect(['FORMAT', 'NOT_POSITIVE']).toContain(problem('-0.01', 2));
  });

  it('refuses amounts above the maximum (TOO_LARGE) and accepts the maximum itself', () => {
    // MAX_AMOUNT = 1e15
    expect(MAX_AMOUNT.toFixed()).toBe('1000000000000000');
    expect(parsed('1000000000000000', 2)).toBe('1000000000000000');
    expect(problem('1000000000000000.01', 2)).toBe('TOO_LARGE');
    expect(problem('1000000000000001', 0)).toBe('TOO_LARGE');
    expect(problem('9'.repeat(60), 0)).toBe('TOO_LARGE');
  });
});

describe('formatAmount', () => {
  it('fiat keeps exactly its ISO 4217 minor units', () => {
    expect(formatAmount('10.5', 'EUR')).toBe('10.50');
    expect(formatAmount('10', 'USD')).toBe('10.00');
    expect(formatAmount('0', 'EUR')).toBe('0.00');
    expect(formatAmount('100', 'JPY')).toBe('100');
    expect(formatAmount('100', 'KRW')).toBe('100');
    expect(formatAmount('1000000000000000', 'EUR')).toBe('1000000000000000.00');
  });

  it('crypto trims trailing zeros', () => {
    expect(formatAmount('0.00250000', 'BTC')).toBe('0.0025');
    expect(formatAmount('1.00000000', 'BTC')).toBe('1');
    expect(formatAmount('100', 'BTC')).toBe('100');
    expect(formatAmount('10.10', 'USDT')).toBe('10.1');
    expect(formatAmount('0', 'ETH')).toBe('0');
    expect(formatAmount('0.000000000000000001', 'ETH')).toBe('0.000000000000000001');
    // Never exponent notation, however small or large.
    expect(formatAmount('0.00000001', 'BTC')).toBe('0.00000001');
    expect(formatAmount('123456789012345', 'XRP')).toBe('123456789012345');
  });

  it('rounds HALF_EVEN by default', () => {
    // 0.125 → tie, 2 is even → 0.12;  0.135 → tie, 3 is odd → 0.14
    expect(formatAmount('0.125', 'EUR')).toBe('0.12');
    expect(formatAmount('0.135', 'EUR')).toBe('0.14');
    expect(formatAmount('0.1251', 'EUR')).toBe('0.13');
    // JPY 0 decimals: 2.5 → 2, 3.5 → 4
    expect(formatAmount('2.5', 'JPY')).toBe('2');
    expect(formatAmount('3.5', 'JPY')).toBe('4');
    // USDT 6 decimals: 1.2345675 → tie, 7 odd → 1.234568; 1.2345665 → tie, 6 even → 1.234566
    expect(formatAmount('1.2345675', 'USDT')).toBe('1.234568');
    expect(formatAmount('1.2345665', 'USDT')).toBe('1.234566');
    // BTC 8 decimals: 0.000000011 → 0.00000001
    expect(formatAmount('0.000000011', 'BTC')).toBe('0.00000001');
  });

  it('rounds UP and DOWN when asked', () => {
    // 0.000000011 BTC rounded UP to 8 decimals = 0.00000002
    expect(formatAmount('0.000000011', 'BTC', 'UP')).toBe('0.00000002');
    expect(formatAmount('0.001', 'EUR', 'UP')).toBe('0.01');
    expect(formatAmount('10.00', 'EUR', 'UP')).toBe('10.00');
    expect(formatAmount('0.019', 'EUR', 'DOWN')).toBe('0.01');
    expect(roundTo(new Dec('0.125'), 'EUR').toFixed()).toBe('0.12');
    expect(roundTo(new Dec('0.121'), 'EUR', 'UP').toFixed()).toBe('0.13');
  });
});

describe('fees (CONTRACT §5)', () => {
  it('splitDeposit: F=2, U=50, amount 101', () => {
    // base = 101 / (1 + 2·50/10000) = 101 / 1.01 = 100
    // serviceFee = 100·2/100 = 2; distributed = 2·50/100 = 1; payable = 101 − 2 = 99
    const s = splitDeposit(new Dec('101'), fees('2', '50'));
    expect(s.base.toFixed()).toBe('100');
    expect(s.serviceFee.toFixed()).toBe('2');
    expect(s.distributedUserServiceFee.toFixed()).toBe('1');
    expect(s.payable.toFixed()).toBe('99');
  });

  it('splitDeposit: F=1, U=0 (the merchant pays the whole fee)', () => {
    // base = 100 / (1 + 0) = 100; serviceFee = 1; distributed = 0; payable = 99
    const s = splitDeposit(new Dec('100'), fees('1', '0'));
    expect(s.base.toFixed()).toBe('100');
    expect(s.serviceFee.toFixed()).toBe('1');
    expect(s.distributedUserServiceFee.toFixed()).toBe('0');
    expect(s.payable.toFixed()).toBe('99');
  });

  it('splitDeposit: fractional percentages F=2.5, U=40, amount 50.5', () => {
    // base = 50.5 / (1 + 2.5·40/10000) = 50.5 / 1.01 = 50
    // serviceFee = 50·2.5/100 = 1.25; distributed = 1.25·40/100 = 0.5; payable = 50.5 − 1.25 = 49.25
    const s = splitDeposit(new Dec('50.5'), fees('2.5', '40'));
    expect(s.base.toFixed()).toBe('50');
    expect(s.serviceFee.toFixed()).toBe('1.25');
    expect(s.distributedUserServiceFee.toFixed()).toBe('0.5');
    expect(s.payable.toFixed()).toBe('49.25');
  });

  it('splitDeposit: a non-terminating split stays exact until rounded once', () => {
    // F=3, U=100, amount 100: base = 100/1.03 = 97.0873786407…; serviceFee = base·0.03 = 2.9126213592…
    // distributed = serviceFee (U = 100); payable = 100 − 2.9126213592… = 97.0873786407… (= base when U = 100)
    const s = splitDeposit(new Dec('100'), fees('3', '100'));
    expect(formatAmount(s.base, 'EUR')).toBe('97.09');
    expect(formatAmount(s.serviceFee, 'EUR')).toBe('2.91');
    expect(formatAmount(s.distributedUserServiceFee, 'EUR')).toBe('2.91');
    expect(formatAmount(s.payable, 'EUR')).toBe('97.09');
    // Unrounded, fee + payable is the deposit exactly.
    expect(s.serviceFee.add(s.payable).toFixed()).toBe('100');
    expect(s.serviceFee.toFixed().slice(0, 14)).toBe('2.912621359223');
  });

  it('userFeeOnTop: the user share of the fee on the requested amount', () => {
    // 100·2/100·50/100 = 1
    expect(userFeeOnTop(new Dec('100'), fees('2', '50')).toFixed()).toBe('1');
    // U = 0: nothing on top
    expect(userFeeOnTop(new Dec('100'), fees('1', '0')).toFixed()).toBe('0');
    // 33.33·1.5/100·100/100 = 0.49995
    expect(userFeeOnTop(new Dec('33.33'), fees('1.5', '100')).toFixed()).toBe('0.49995');
    // 0.0025 BTC·1/100·50/100 = 0.0000125
    expect(userFeeOnTop(new Dec('0.0025'), fees('1', '50')).toFixed()).toBe('0.0000125');
  });

  it('a deposit of requested + fee on top splits back to base = requested', () => {
    // requested 33.33, F=1.5, U=100: on top 0.49995, deposit 33.82995;
    // base = 33.82995 / 1.015 = 33.33; serviceFee = 33.33·0.015 = 0.49995; payable = 33.33
    const requested = new Dec('33.33');
    const f = fees('1.5', '100');
    const s = splitDeposit(requested.add(userFeeOnTop(requested, f)), f);
    expect(s.base.toFixed()).toBe('33.33');
    expect(s.serviceFee.toFixed()).toBe('0.49995');
    expect(s.payable.toFixed()).toBe('33.33');
  });
});

describe('pricing against the sandbox rates', () => {
  it('priceFiat: EUR 150 without user fee', async () => {
    const p = priceFiat('EUR', new Dec('150'), fees('1', '0'), await rates.rate('EUR', 'EUR', AT));
    expect(p.expectedDisplayAmount.toFixed()).toBe('150');
    expect(p.expectedDisplayFee.toFixed()).toBe('0');
    expect(p.expectedUniformAmount.toFixed(2)).toBe('150.00');
  });

  it('priceFiat: USD 100 is 92.00 EUR uniform', async () => {
    // 100 USD × 0.92 EUR/USD = 92.00 EUR
    const p = priceFiat('USD', new Dec('100'), fees('1', '0'), await rates.rate('USD', 'EUR', AT));
    expect(p.expectedUniformAmount.toFixed(2)).toBe('92.00');
  });

  it('priceFiat: the user fee goes on top, and into the uniform amount', async () => {
    // F=2, U=50: fee = 100·2/100·50/100 = 1.00 USD; uniform = (100 + 1) × 0.92 = 92.92 EUR
    const p = priceFiat('USD', new Dec('100'), fees('2', '50'), await rates.rate('USD', 'EUR', AT));
    expect(p.expectedDisplayAmount.toFixed(2)).toBe('100.00');
    expect(p.expectedDisplayFee.toFixed(2)).toBe('1.00');
    expect(p.expectedUniformAmount.toFixed(2)).toBe('92.92');
  });

  it('priceFiat: the fee is rounded HALF_EVEN to the display currency (JPY, 0 decimals)', async () => {
    // JPY 1100, F=1, U=50: fee = 1100·0.01·0.5 = 5.5 → 6 (tie, 5 odd → 6)
    // uniform = (1100 + 6) × 0.0062 = 6.8572 → 6.86 EUR
    const a = priceFiat('JPY', new Dec('1100'), fees('1', '50'), await rates.rate('JPY', 'EUR', AT));
    expect(a.expectedDisplayFee.toFixed()).toBe('6');
    expect(a.expectedUniformAmount.toFixed(2)).toBe('6.86');
    // JPY 1300: fee = 6.5 → 6 (tie, 6 even)
    const b = priceFiat('JPY', new Dec('1300'), fees('1', '50'), await rates.rate('JPY', 'EUR', AT));
    expect(b.expectedDisplayFee.toFixed()).toBe('6');
  });

  it('priceInCrypto: EUR 150 → BTC at 60000 EUR/BTC = 0.0025', async () => {
    const p = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('150'), fee: new Dec('0') }, 'BTC', AT);
    expect(p.expectedDepositAmount.toFixed()).toBe('0.0025');
    expect(p.expectedDepositFee.toFixed()).toBe('0');
    expect(p.rate.toFixed()).toBe('60000');
  });

  it('priceInCrypto: rounds the amount due UP when not exact', async () => {
    // 100 EUR / 60000 EUR/BTC = 0.0016666666… → UP → 0.00166667 (HALF_EVEN would also give …67)
    const a = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('100'), fee: new Dec('0') }, 'BTC', AT);
    expect(a.expectedDepositAmount.toFixed()).toBe('0.00166667');
    // 92 USD × 0.92 / 60000 = 84.64/60000 = 0.00141066666… → UP → 0.00141067
    const b = await priceInCrypto(rates, { currency: 'USD', amount: new Dec('92'), fee: new Dec('0') }, 'BTC', AT);
    expect(b.expectedDepositAmount.toFixed()).toBe('0.00141067');
    // 0.01 EUR / 60000 = 0.000000166… → UP → 0.00000017
    const c = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('0.01'), fee: new Dec('0') }, 'BTC', AT);
    expect(c.expectedDepositAmount.toFixed()).toBe('0.00000017');
    // 0.02 EUR / 60000 = 0.000000333… → UP → 0.00000034 (HALF_EVEN would give 0.00000033)
    const d = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('0.02'), fee: new Dec('0') }, 'BTC', AT);
    expect(d.expectedDepositAmount.toFixed()).toBe('0.00000034');
  });

  it('priceInCrypto: an 18-decimal coin is quoted with at most 8 decimals, rounded UP', async () => {
    // 25 EUR / 3000 EUR/ETH = 0.0083333… → 8 decimals UP → 0.00833334 (not 0.008333333333333334)
    const eth = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('25'), fee: new Dec('0') }, 'ETH', AT);
    expect(eth.expectedDepositAmount.toFixed()).toBe('0.00833334');
    // 600 EUR / 550 EUR/BNB = 1.0909090909… → 1.09090910
    const bnb = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('600'), fee: new Dec('0') }, 'BNB', AT);
    expect(bnb.expectedDepositAmount.toFixed()).toBe('1.0909091');
    // USDT has 6 decimals, fewer than 8: its own precision applies. 25 EUR at the peg (0.92 EUR/USD) = 27.1739130… → 27.173914
    const usdt = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('25'), fee: new Dec('0') }, 'USDT', AT);
    expect(usdt.expectedDepositAmount.toFixed()).toBe('27.173914');
  });

  it('priceInCrypto: with a fee, amount + fee rounds UP and the fee alone HALF_EVEN', async () => {
    // (100 + 1) / 60000 = 0.00168333… → UP → 0.00168334;  fee 1/60000 = 0.0000166666… → 0.00001667
    const p = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('100'), fee: new Dec('1') }, 'BTC', AT);
    expect(p.expectedDepositAmount.toFixed()).toBe('0.00168334');
    expect(p.expectedDepositFee.toFixed()).toBe('0.00001667');
  });

  it('priceInCrypto: cross rates through EUR, stablecoins at the USD peg', async () => {
    // 100 USD in USDC: stablecoins are priced at their 1:1 USD peg (CONTRACT §5) → 100 USDC
    const a = await priceInCrypto(rates, { currency: 'USD', amount: new Dec('100'), fee: new Dec('0') }, 'USDC', AT);
    expect(a.expectedDepositAmount.toFixed()).toBe('100');
    // 92 EUR in USDT: 1 USDT = 1 USD = 0.92 EUR → 92 / 0.92 = 100 USDT (the market 0.9195 is not used)
    const u = await priceInCrypto(rates, { currency: 'EUR', amount: new Dec('92'), fee: new Dec('0') }, 'USDT', AT);
    expect(u.expectedDepositAmount.toFixed()).toBe('100');
    // 117 GBP in ETH: 117 × 1.17 / 3000 = 136.89 / 3000 = 0.04563 (exact)
    const b = await priceInCrypto(rates, { currency: 'GBP', amount: new Dec('117'), fee: new Dec('0') }, 'ETH', AT);
    expect(b.expectedDepositAmount.toFixed()).toBe('0.04563');
  });

  it('priceCrypto: BTC 0.0025 for an EUR-settled business', async () => {
    // 0.0025 BTC × 60000 = 150.00 EUR (display and uniform)
    const p = await priceCrypto(rates, 'BTC', new Dec('0.0025'), 'EUR', fees('1', '0'), AT);
    expect(p.displayCurrency).toBe('EUR');
    expect(p.expectedDisplayAmount.toFixed(2)).toBe('150.00');
    expect(p.expectedDisplayFee.toFixed(2)).toBe('0.00');
    expect(p.expectedUniformAmount.toFixed(2)).toBe('150.00');
    expect(p.expectedDepositAmount.toFixed()).toBe('0.0025');
    expect(p.expectedDepositFee.toFixed()).toBe('0');
    expect(p.rate.toFixed()).toBe('60000');
  });

  it('priceCrypto: display currency is the fiat settlement currency, else EUR', async () => {
    // USD: 0.0025 × 60000 / 0.92 = 150 / 0.92 = 163.0434782… → 163.04 USD; uniform still 150.00 EUR
    const usd = await priceCrypto(rates, 'BTC', new Dec('0.0025'), 'USD', fees('1', '0'), AT);
    expect(usd.displayCurrency).toBe('USD');
    expect(usd.expectedDisplayAmount.toFixed(2)).toBe('163.04');
    expect(usd.expectedUniformAmount.toFixed(2)).toBe('150.00');
    // GBP: 150 / 1.17 = 128.2051282… → 128.21 GBP
    const gbp = await priceCrypto(rates, 'BTC', new Dec('0.0025'), 'GBP', fees('1', '0'), AT);
    expect(gbp.displayCurrency).toBe('GBP');
    expect(gbp.expectedDisplayAmount.toFixed(2)).toBe('128.21');
    // Crypto settlement (BTC, USDT): display in EUR
    for (const settlement of ['BTC', 'USDT', 'USDC']) {
      const p = await priceCrypto(rates, 'BTC', new Dec('0.0025'), settlement, fees('1', '0'), AT);
      expect(p.displayCurrency, settlement).toBe('EUR');
      expect(p.expectedDisplayAmount.toFixed(2)).toBe('150.00');
    }
  });

  it('priceCrypto: the user fee goes on top of the crypto amount', async () => {
    // BTC 0.01, F=2, U=50: fee = 0.01·0.02·0.5 = 0.0001 BTC; deposit = 0.0101 BTC
    // display = 0.01 × 60000 = 600.00 EUR; display fee = 0.0001 × 60000 = 6.00; uniform = 0.0101 × 60000 = 606.00
    const p = await priceCrypto(rates, 'BTC', new Dec('0.01'), 'EUR', fees('2', '50'), AT);
    expect(p.expectedDepositAmount.toFixed()).toBe('0.0101');
    expect(p.expectedDepositFee.toFixed()).toBe('0.0001');
    expect(p.expectedDisplayAmount.toFixed(2)).toBe('600.00');
    expect(p.expectedDisplayFee.toFixed(2)).toBe('6.00');
    expect(p.expectedUniformAmount.toFixed(2)).toBe('606.00');
  });

  it('priceCrypto: USDC valued at its 1:1 USD peg, not at the sandbox market rate', async () => {
    // 100 USDC, USD settlement: 100 × 1 = 100.00 USD; uniform 100 USD × 0.92 = 92.00 EUR
    // (the market value 100 × 0.9191 = 91.91 EUR would be the depeg loss's business, not the price's)
    const p = await priceCrypto(rates, 'USDC', new Dec('100'), 'USD', fees('1', '0'), AT);
    expect(p.displayCurrency).toBe('USD');
    expect(p.expectedDisplayAmount.toFixed(2)).toBe('100.00');
    expect(p.expectedUniformAmount.toFixed(2)).toBe('92.00');
  });
});

describe('SandboxRates table', () => {
  it('prices all 40 fiat and 12 crypto currencies of the catalog', async () => {
    expect(FIAT_CURRENCIES).toHaveLength(40);
    expect(new Set(FIAT_CURRENCIES).size).toBe(40);
    expect(CRYPTO_CURRENCIES).toHaveLength(12);
    expect(new Set(CRYPTO_CURRENCIES).size).toBe(12);
    const catalog = [...FIAT_CURRENCIES, ...CRYPTO_CURRENCIES];
    expect(PRICED_CURRENCIES).toEqual(expect.arrayContaining(catalog));
    for (const code of catalog) {
      const value = SANDBOX_EUR_VALUES[code];
      expect(value, code).toBeDefined();
      expect((await rates.rate(code, 'EUR', AT)).toFixed(), code).toBe(new Dec(value).toFixed());
      expect(value, code).toMatch(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/);
      expect(new Dec(value).gt(0), code).toBe(true);
    }
  });

  it('documents the anchor values used throughout the tests', () => {
    expect(SANDBOX_EUR_VALUES.EUR).toBe('1');
    expect(SANDBOX_EUR_VALUES.USD).toBe('0.92');
    expect(SANDBOX_EUR_VALUES.GBP).toBe('1.17');
    expect(SANDBOX_EUR_VALUES.BTC).toBe('60000');
    expect(SANDBOX_EUR_VALUES.ETH).toBe('3000');
    // Stablecoins trade slightly off their 1 USD = 0.92 EUR peg, so depeg loss shows.
    expect(SANDBOX_EUR_VALUES.USDC).not.toBe('0.92');
    expect(SANDBOX_EUR_VALUES.USDT).not.toBe('0.92');
  });

  it('gives a positive rate for every pair; identity is 1; inverse rates multiply to 1', async () => {
    const codes: readonly (FiatCurrency | CryptoCurrency)[] = [...FIAT_CURRENCIES, ...CRYPTO_CURRENCIES];
    for (const from of codes) {
      expect((await rates.rate(from, from, AT)).toFixed(), from).toBe('1');
      for (const to of ['EUR', 'USD', 'BTC', 'JPY'] as const) {
        const there = await rates.rate(from, to, AT);
        const back = await rates.rate(to, from, AT);
        expect(there.gt(0), `${from}→${to}`).toBe(true);
        expect(there.mul(back).toDecimalPlaces(40).toFixed(), `${from}↔${to}`).toBe('1');
      }
    }
    // 1 BTC = 60000 EUR = 60000/0.92 USD = 65217.39… USD
    expect((await rates.rate('BTC', 'USD', AT)).toFixed(2)).toBe('65217.39');
    // 1 EUR = 1/60000 BTC
    expect((await rates.rate('EUR', 'BTC', AT)).mul(60000).toDecimalPlaces(40).toFixed()).toBe('1');
  });
});

describe('network tables', () => {
  it('DEPOSIT_NETWORKS: the 2022-09-26 table plus SOL and USDC on SOL (2024-05-16)', () => {
    const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();
    // 2022-09-26: USDC: ETH, BSC, TRX. ETH: ETH, BSC. USDT: ETH, BSC, TRX. BTC: BTC. BCH: BCH.
    // LTC: LTC. XRP: XRP. XLM: XLM. LINK: ETH.  2024-05-16: SOL on SOL, USDC also on SOL.
    const expected: Record<string, string[]> = {
      USDC: ['BSC', 'ETH', 'SOL', 'TRX'],
      ETH: ['BSC', 'ETH'],
      USDT: ['BSC', 'ETH', 'TRX'],
      BTC: ['BTC'],
      BCH: ['BCH'],
      LTC: ['LTC'],
      XRP: ['XRP'],
      XLM: ['XLM'],
      LINK: ['ETH'],
      SOL: ['SOL'],
    };
    for (const [currency, networks] of Object.entries(expected)) {
      expect(sorted(DEPOSIT_NETWORKS[currency as CryptoCurrency]), currency).toEqual(networks);
    }
    // Every catalog currency is depositable somewhere (BNB and TRX pairings are the README's decision).
    for (const currency of CRYPTO_CURRENCIES) {
      expect(DEPOSIT_NETWORKS[currency].length, currency).toBeGreaterThan(0);
    }
    expect(Object.keys(DEPOSIT_NETWORKS).sort()).toEqual([...CRYPTO_CURRENCIES].sort());
  });

  it('WITHDRAWAL_NETWORKS: 10 payout currencies, the 2022-08-15 table plus SOL, no MAIN', () => {
    const entries = Object.entries(WITHDRAWAL_NETWORKS);
    expect(entries).toHaveLength(10);
    expect(Object.keys(WITHDRAWAL_NETWORKS).sort()).toEqual(
      ['BCH', 'BTC', 'ETH', 'LINK', 'LTC', 'SOL', 'USDC', 'USDT', 'XLM', 'XRP'],
    );
    for (const [currency, networks] of entries) {
      expect(networks, currency).not.toContain('MAIN');
      expect(networks!.length, currency).toBeGreaterThan(0);
    }
    expect([...WITHDRAWAL_NETWORKS.BTC!]).toEqual(['BTC']);
    expect([...WITHDRAWAL_NETWORKS.ETH!].sort()).toEqual(['BSC', 'ETH']);
    expect([...WITHDRAWAL_NETWORKS.LINK!]).toEqual(['ETH']);
    expect([...WITHDRAWAL_NETWORKS.USDC!].sort()).toEqual(['BSC', 'ETH', 'SOL', 'TRX']);
    expect([...WITHDRAWAL_NETWORKS.USDT!].sort()).toEqual(['BSC', 'ETH', 'TRX']);
    expect([...WITHDRAWAL_NETWORKS.SOL!]).toEqual(['SOL']);
    expect(WITHDRAWAL_NETWORKS.BNB).toBeUndefined();
    expect(WITHDRAWAL_NETWORKS.TRX).toBeUndefined();
  });
});
