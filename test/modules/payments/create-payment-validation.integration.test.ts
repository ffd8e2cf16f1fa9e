/**
 * POST /v1/payments input rules (spec §2.2, §4.1, §8; CONTRACT §2–§4), one
 * describe block per rule, each with a refused and an accepted case, plus
 * fees at creation, idempotency, listing and reading. Expected values come
 * from the spec's tables written out here, not from the server's catalog,
 * so a wrong catalog fails these tests.
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatedPaymentResponseSchema, PaymentListSchema, PaymentRecordSchema } from '../../../server/modules/payments/payment-record.schema.js';
import { startTestApp, type TestApp, type TestBusiness } from '../../helpers/app.js';
import { DEPOSIT_MIN_AMOUNTS } from '../../../server/modules/money/catalog.js';
import { updateBusiness } from '../../../server/modules/businesses/business.service.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

// ---------------------------------------------------------------------------
// Spec tables (§2.1 and the 2024-05-16 change)

const SPEC_FIAT = [
  'AED', 'ARS', 'AUD', 'BDT', 'BGN', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP',
  'HKD', 'HRK', 'HUF', 'IDR', 'ILS', 'INR', 'ISK', 'JPY', 'KES', 'KRW', 'MXN', 'MYR', 'NOK', 'NZD',
  'PEN', 'PHP', 'PLN', 'QAR', 'RON', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'VND', 'ZAR',
];
/** ISO 4217 currencies of the list without minor units. */
const ZERO_DECIMAL_FIAT = ['CLP', 'ISK', 'JPY', 'KRW', 'VND'];

/**
 * Deposit networks: the 2022-09-26 table, SOL and USDC on SOL since
 * 2024-05-16. BNB and TRX are "not shown" by the spec; Kassa accepts each on
 * its own chain (server/modules/money/catalog.ts, README).
 */
const SPEC_DEPOSIT_NETWORKS: Record<string, string[]> = {
  USDC: ['ETH', 'BSC', 'TRX', 'SOL'],
  ETH: ['ETH', 'BSC'],
  USDT: ['ETH', 'BSC', 'TRX'],
  BTC: ['BTC'],
  BCH: ['BCH'],
  LTC: ['LTC'],
  XRP: ['XRP'],
  XLM: ['XLM'],
  LINK: ['ETH'],
  SOL: ['SOL'],
  BNB: ['BSC'],
  TRX: ['TRX'],
};
const DEPOSIT_PAIRS = Object.entries(SPEC_DEPOSIT_NETWORKS).flatMap(([currency, networks]) =>
  networks.map((network) => ({ currency, network })),
);
const TAG_NETWORKS = ['XRP', 'XLM'];
const DELISTED = ['BAT', 'BNT', 'CVC', 'ENJ', 'MITH', 'MTL', 'OMG', 'REP'];
const LANGUAGES = ['ar', 'bg', 'zh', 'en', 'fr', 'de', 'ja', 'lt', 'pt', 'ru', 'es', 'tr'];

// ---------------------------------------------------------------------------
// Local helpers

type Body = Record<string, unknown>;
type Problem = { type: string; title: string; status: number; detail: string; code: string; errors: { field: string; message: string }[] };

let counter = 0;
const newClientId = (prefix = 'order') => `${prefix}-${++counter}-${randomUUID().slice(0, 8)}`;

/** A complete fiat request; `undefined` overrides drop a field (JSON.stringify omits it). */
const fiat = (overrides: Body = {}, businessId = t.business.businessId): Body => ({
  clientPaymentId: newClientId(),
  businessId,
  locale: 'en-US',
  displayCurrency: 'EUR',
  displayAmount: '10.00',
  ...overrides,
});

const crypto = (overrides: Body = {}, businessId = t.business.businessId): Body => ({
  clientPaymentId: newClientId(),
  businessId,
  locale: 'en',
  depositCurrency: 'BTC',
  depositAmount: '0.01',
  network: 'BTC',
  ...overrides,
});

const create = (body: unknown, who?: TestBusiness) => t.signed('POST', '/v1/payments', body, who);

/** POST and expect 200; returns the (strictly parsed) payment record. */
async function accepted(body: unknown, who?: TestBusiness) {
  const res = await create(body, who);
  expect(res.statusCode, res.body).toBe(200);
  return CreatedPaymentResponseSchema.parse(res.json()).paymentInfo;
}

/** problem+json with exactly the RFC 9457 keys of CONTRACT §3, `status` equal to the HTTP status. */
function expectProblem(res: LightMyRequestResponse, status: number, code: string): Problem {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as Problem;
  expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'errors', 'status', 'title', 'type']);
  expect(body.status).toBe(status);
  expect(body.code).toBe(code);
  expect(res.body).not.toMatch(/\n\s*at |\bat .+:\d+:\d+/);
  expect(res.body).not.toMatch(/SELECT|INSERT/);
  return body;
}

/** 400 VALIDATION_FAILED naming exactly these fields. */
function expectInvalid(res: LightMyRequestResponse, fields: string[]): Problem {
  const body = expectProblem(res, 400, 'VALIDATION_FAILED');
  expect([...new Set(body.errors.map((e) => e.field))].sort()).toEqual([...fields].sort());
  for (const e of body.errors) expect(e.message).toEqual(expect.any(String));
  return body;
}

const messageFor = (problem: Problem, field: string) => problem.errors.filter((e) => e.field === field).map((e) => e.message).join(' | ');

async function countRows(): Promise<{ payments: number; events: number }> {
  const [row] = await t.db.sql<{ payments: number; events: number }[]>`
    select (select count(*)::int from payments) as payments, (select count(*)::int from events where entity_type = 'payment') as events`;
  return row!;
}

// ---------------------------------------------------------------------------

describe('required fields: clientPaymentId, businessId, locale (spec §4.1 rule 1)', () => {
  it('accepts a request with all three', async () => {
    const body = fiat();
    const p = await accepted(body);
    expect(p.clientPaymentId).toBe(body.clientPaymentId);
    expect(p.businessId).toBe(t.business.businessId);
    expect(p.locale).toBe('en-US');
  });

  it.each(['clientPaymentId', 'businessId', 'locale'])('refuses a request without %s', async (field) => {
    expectInvalid(await create(fiat({ [field]: undefined })), [field]);
  });

  it('refuses an empty clientPaymentId and a businessId that is not a UUID', async () => {
    // one error, the true one: an empty string has no control characters to complain of
    const empty = expectInvalid(await create(fiat({ clientPaymentId: '' })), ['clientPaymentId']);
    expect(empty.errors).toHaveLength(1);
    expect(messageFor(empty, 'clientPaymentId')).not.toContain('control characters');
    expectInvalid(await create(fiat({ businessId: 'shop-1' })), ['businessId']);
  });

  it('names __proto__ and constructor.prototype as unknown keys (400 VALIDATION_FAILED), not as malformed JSON', async () => {
    const text = JSON.stringify(fiat({}));
    const proto = expectInvalid(await create(text.replace(/^\{/, '{"__proto__":{"polluted":true},')), ['__proto__']);
    expect(messageFor(proto, '__proto__')).toContain('unknown field');
    expectInvalid(await create(text.replace(/^\{/, '{"constructor":{"prototype":{"polluted":true}},')), ['constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names every missing field at once', async () => {
    expectInvalid(await create(fiat({ clientPaymentId: undefined, businessId: undefined, locale: undefined })), [
      'businessId', 'clientPaymentId', 'locale',
    ]);
  });
});

describe('amount either in fiat or in crypto (spec §4.1 rule 2)', () => {
  it('accepts fiat (displayCurrency + displayAmount): NEW, no address yet', async () => {
    const p = await accepted(fiat());
    expect(p.status).toBe('NEW');
    expect(p.displayCurrency).toBe('EUR');
    expect(p.expectedDisplayAmount).toBe('10.00');
    expect(p.walletAddress).toBeUndefined();
    expect(p.depositCurrency).toBeUndefined();
  });

  it('accepts crypto (depositCurrency + depositAmount + network): PENDING with an address', async () => {
    const p = await accepted(crypto());
    expect(p.status).toBe('PENDING');
    expect(p.depositCurrency).toBe('BTC');
    expect(p.expectedNetwork).toBe('BTC');
    expect(p.expectedDepositAmount).toBe('0.01');
    expect(p.walletAddress).toEqual(expect.any(String));
  });

  it('refuses displayCurrency without displayAmount', async () => {
    expectInvalid(await create(fiat({ displayAmount: undefined })), ['displayAmount']);
  });

  it('refuses displayAmount without displayCurrency', async () => {
    expectInvalid(await create(fiat({ displayCurrency: undefined })), ['displayCurrency']);
  });

  it('refuses depositCurrency without depositAmount', async () => {
    expectInvalid(await create(crypto({ depositAmount: undefined })), ['depositAmount']);
  });

  it('refuses depositCurrency without network', async () => {
    expectInvalid(await create(crypto({ network: undefined })), ['network']);
  });

  it('refuses depositAmount and network without depositCurrency', async () => {
    expectInvalid(await create(crypto({ depositCurrency: undefined })), ['depositCurrency']);
  });

  it('refuses both fiat and crypto in one request', async () => {
    const problem = expectInvalid(
      await create(fiat({ depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' })),
      ['displayCurrency'],
    );
    expect(messageFor(problem, 'displayCurrency')).toMatch(/not both/);
  });

  it('refuses neither fiat nor crypto', async () => {
    expectInvalid(await create(fiat({ displayCurrency: undefined, displayAmount: undefined })), ['displayCurrency']);
  });
});

describe('displayCurrency: the 40 fiat currencies of spec §2.1', () => {
  it('accepts every one of them', async () => {
    expect(SPEC_FIAT).toHaveLength(40);
    for (const currency of SPEC_FIAT) {
      const p = await accepted(fiat({ displayCurrency: currency, displayAmount: '10' }));
      expect(p.status, currency).toBe('NEW');
      expect(p.displayCurrency, currency).toBe(currency);
      expect(p.expectedDisplayAmount, currency).toBe(ZERO_DECIMAL_FIAT.includes(currency) ? '10' : '10.00');
    }
  });

  it.each(['XYZ', 'eur', 'BTC', ''])('refuses %j', async (currency) => {
    expectInvalid(await create(fiat({ displayCurrency: currency })), ['displayCurrency']);
  });
});

describe('depositCurrency and network: the deposit pairs of spec §2.1', () => {
  // At the pair's minimum (or 1 when that is more): the smallest accepted payment is accepted.
  const amountFor = (currency: string, network: string) => {
    const min = DEPOSIT_MIN_AMOUNTS[currency as keyof typeof DEPOSIT_MIN_AMOUNTS][network as 'BTC']!;
    return Number(min) > 1 ? min : '1';
  };
  it.each(DEPOSIT_PAIRS)('accepts $currency on $network: PENDING with a deposit address', async ({ currency, network }) => {
    const amount = amountFor(currency, network);
    const p = await accepted(crypto({ depositCurrency: currency, network, depositAmount: amount }));
    expect(p.status).toBe('PENDING');
    expect(p.depositCurrency).toBe(currency);
    expect(p.expectedNetwork).toBe(network);
    expect(p.expectedDepositAmount).toBe(amount);
    expect(p.walletAddress).toMatch(/^\S{20,}$/);
    if (TAG_NETWORKS.includes(network)) expect(p.destinationTag).toMatch(/^[0-9]+$/);
    else expect(p.destinationTag).toBeUndefined();
  });

  it('gives every payment its own address (or tag on XRP/XLM)', async () => {
    const a = await accepted(crypto({ depositCurrency: 'XRP', network: 'XRP', depositAmount: '5' }));
    const b = await accepted(crypto({ depositCurrency: 'XRP', network: 'XRP', depositAmount: '5' }));
    expect(`${a.walletAddress}/${a.destinationTag}`).not.toBe(`${b.walletAddress}/${b.destinationTag}`);
    const c = await accepted(crypto());
    const d = await accepted(crypto());
    expect(c.walletAddress).not.toBe(d.walletAddress);
  });

  it.each([
    { currency: 'BTC', network: 'ETH' },
    { currency: 'LINK', network: 'BSC' },
    { currency: 'ETH', network: 'TRX' },
    { currency: 'USDT', network: 'SOL' },
    { currency: 'XRP', network: 'XLM' },
    { currency: 'SOL', network: 'ETH' },
  ])('refuses $currency on $network', async ({ currency, network }) => {
    const problem = expectInvalid(await create(crypto({ depositCurrency: currency, network, depositAmount: '1' })), ['network']);
    expect(messageFor(problem, 'network')).toContain(currency);
  });

  it('refuses an unknown network and the MAIN network removed on 2022-08-21', async () => {
    expectInvalid(await create(crypto({ network: 'MAIN' })), ['network']);
    expectInvalid(await create(crypto({ network: 'DOGE' })), ['network']);
  });

  it.each(DELISTED)('refuses %s, delisted on 2022-07-15, saying so', async (currency) => {
    const problem = expectInvalid(await create(crypto({ depositCurrency: currency, network: 'ETH', depositAmount: '1' })), ['depositCurrency']);
    expect(messageFor(problem, 'depositCurrency')).toMatch(/delist/i);
  });

  it('refuses an unknown cryptocurrency without calling it delisted', async () => {
    const problem = expectInvalid(await create(crypto({ depositCurrency: 'DOGE', network: 'ETH' })), ['depositCurrency']);
    expect(messageFor(problem, 'depositCurrency')).not.toMatch(/delist/i);
  });
});

describe('locale (spec §2.2)', () => {
  it.each(['en-US', 'en_US', 'en', 'ar', 'zh-Hant-TW'])('accepts %j and reports it', async (locale) => {
    const p = await accepted(fiat({ locale }));
    expect(p.locale).toBe(locale);
  });

  it('accepts every one of the 12 supported languages', async () => {
    for (const language of LANGUAGES) {
      const p = await accepted(fiat({ locale: language }));
      expect(p.locale).toBe(language);
    }
  });

  it.each(['xx', 'english', 'en--US', '', 42])('refuses %j', async (locale) => {
    expectInvalid(await create(fiat({ locale })), ['locale']);
  });
});

describe('expirationMinutes (spec §2.2, §8)', () => {
  it('defaults to 30 on ONE_TIME', async () => {
    expect((await accepted(fiat({ expirationMinutes: undefined }))).expirationMinutes).toBe(30);
  });

  it('reports 0 as 10080 (seven days)', async () => {
    expect((await accepted(fiat({ expirationMinutes: 0 }))).expirationMinutes).toBe(10080);
  });

  it('keeps 60', async () => {
    expect((await accepted(fiat({ expirationMinutes: 60 }))).expirationMinutes).toBe(60);
  });

  it.each([-1, 1.5, '30', null])('refuses %j', async (expirationMinutes) => {
    expectInvalid(await create(fiat({ expirationMinutes })), ['expirationMinutes']);
  });
});

describe('type and rateType (spec §2.2, CONTRACT §4 defaults)', () => {
  it('defaults to ONE_TIME and FIXED', async () => {
    const p = await accepted(fiat());
    expect(p.type).toBe('ONE_TIME');
    expect(p.rateType).toBe('FIXED');
  });

  it('keeps FLOATING on a ONE_TIME payment', async () => {
    const p = await accepted(fiat({ type: 'ONE_TIME', rateType: 'FLOATING' }));
    expect(p.type).toBe('ONE_TIME');
    expect(p.rateType).toBe('FLOATING');
  });

  it('makes REUSABLE payments FLOATING and never expiring (expirationMinutes 0)', async () => {
    const p = await accepted(fiat({ type: 'REUSABLE' }));
    expect(p.type).toBe('REUSABLE');
    expect(p.rateType).toBe('FLOATING');
    expect(p.expirationMinutes).toBe(0);
    const withExpiry = await accepted(fiat({ type: 'REUSABLE', rateType: 'FLOATING', expirationMinutes: 60 }));
    expect(withExpiry.expirationMinutes).toBe(0);
    expect(withExpiry.rateType).toBe('FLOATING');
  });

  it('refuses REUSABLE with FIXED', async () => {
    expectInvalid(await create(fiat({ type: 'REUSABLE', rateType: 'FIXED' })), ['rateType']);
  });

  it('refuses unknown values', async () => {
    expectInvalid(await create(fiat({ type: 'MONTHLY' })), ['type']);
    expectInvalid(await create(fiat({ rateType: 'VARIABLE' })), ['rateType']);
  });
});

describe('redirectUrl and redirectMode (spec §2.2, §4.1 rule 4)', () => {
  it.each(['https://shop.example/thanks?order=1', 'http://localhost:8080/done'])('accepts redirectUrl %j', async (redirectUrl) => {
    expect((await accepted(fiat({ redirectUrl }))).redirectUrl).toBe(redirectUrl);
  });

  it.each(['javascript:alert(1)', 'ftp://x', '/thanks', 'data:text/html,hi', ''])('refuses redirectUrl %j', async (redirectUrl) => {
    expectInvalid(await create(fiat({ redirectUrl })), ['redirectUrl']);
  });

  it('defaults redirectMode to PARENT and keeps SELF', async () => {
    expect((await accepted(fiat({ redirectUrl: 'https://shop.example/' }))).redirectMode).toBe('PARENT');
    expect((await accepted(fiat({ redirectUrl: 'https://shop.example/', redirectMode: 'SELF' }))).redirectMode).toBe('SELF');
  });

  it.each(['TOP', 'self', '_blank'])('refuses redirectMode %j', async (redirectMode) => {
    expectInvalid(await create(fiat({ redirectMode })), ['redirectMode']);
  });
});

describe('amount strings (CONTRACT §4: positive decimals, at most the currency decimals)', () => {
  it.each([
    ['10', '10.00'],
    ['10.5', '10.50'],
    ['10.50', '10.50'],
  ])('accepts EUR %j and echoes it as %j', async (displayAmount, expected) => {
    expect((await accepted(fiat({ displayAmount }))).expectedDisplayAmount).toBe(expected);
  });

  it('accepts whole JPY (0 decimals) and refuses fractions of it', async () => {
    expect((await accepted(fiat({ displayCurrency: 'JPY', displayAmount: '100' }))).expectedDisplayAmount).toBe('100');
    expectInvalid(await create(fiat({ displayCurrency: 'JPY', displayAmount: '100.5' })), ['displayAmount']);
  });

  it.each(['10.505', '0', '0.00', '-1', '1e3', ' 1', '1 ', '1,5', 'NaN', ''])(
    'refuses EUR %j',
    async (displayAmount) => {
      expectInvalid(await create(fiat({ displayAmount })), ['displayAmount']);
    },
  );

  it('refuses a JSON number', async () => {
    expectInvalid(await create(fiat({ displayAmount: 10 })), ['displayAmount']);
    expectInvalid(await create(crypto({ depositAmount: 0.01 })), ['depositAmount']);
  });

  it('accepts a last satoshi and refuses a tenth of one (above the BTC minimum of 0.0001)', async () => {
    expect((await accepted(crypto({ depositAmount: '0.00010001' }))).expectedDepositAmount).toBe('0.00010001');
    expectInvalid(await create(crypto({ depositAmount: '0.000100001' })), ['depositAmount']);
  });
});

describe('businessId and the business’s allowed networks (CONTRACT §2, change of 2024-08-06)', () => {
  it('refuses a businessId of another business with 403 FORBIDDEN_BUSINESS', async () => {
    const other = await t.addBusiness({ name: 'Other shop' });
    expectProblem(await create(fiat({}, other.businessId)), 403, 'FORBIDDEN_BUSINESS');
    // The same body is fine for that business's own key.
    expect((await accepted(fiat({}, other.businessId), other)).businessId).toBe(other.businessId);
  });

  it('refuses USDT on ETH with 422 NETWORK_NOT_ALLOWED when the business allows only TRX, accepts TRX', async () => {
    const shop = await t.addBusiness({ allowedNetworks: { USDT: ['TRX'] } });
    const usdt = (network: string) => crypto({ depositCurrency: 'USDT', network, depositAmount: '25' }, shop.businessId);
    const problem = expectProblem(await create(usdt('ETH'), shop), 422, 'NETWORK_NOT_ALLOWED');
    expect(problem.errors.map((e) => e.field)).toEqual(['network']);
    const p = await accepted(usdt('TRX'), shop);
    expect(p.status).toBe('PENDING');
    expect(p.expectedNetwork).toBe('TRX');
    // Currencies the setting does not name keep all their networks.
    expect((await accepted(crypto({ depositCurrency: 'USDC', network: 'ETH', depositAmount: '25' }, shop.businessId), shop)).expectedNetwork).toBe('ETH');
  });
});

describe('fees at creation (CONTRACT §5: the user fee goes on top)', () => {
  let shop: TestBusiness;
  beforeAll(async () => {
    shop = await t.addBusiness({ serviceFeePercent: '2', userFeeSharePercent: '50' });
  });

  it('EUR 100.00 with F = 2 %, U = 50 %: fee 1.00 on top, 101.00 EUR expected', async () => {
    // user fee = 100.00 × 2/100 × 50/100 = 1.00 EUR; uniform = (100.00 + 1.00) × 1 EUR/EUR = 101.00
    const p = await accepted(fiat({ displayAmount: '100.00' }, shop.businessId), shop);
    expect(p.expectedDisplayAmount).toBe('100.00');
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('1.00');
    expect(p.expectedUniformAmount).toBe('101.00');
    expect(p.userServiceFeeDistributionPercentage).toBe('50');
  });

  it('BTC 0.01 with F = 2 %, U = 50 %: fee 0.0001 on top, 0.0101 BTC expected', async () => {
    // user fee = 0.01 × 2/100 × 50/100 = 0.0001 BTC, exact at 8 decimals (no HALF_EVEN rounding happens);
    // expectedDepositAmount = 0.01 + 0.0001 = 0.0101, exact (no UP rounding happens).
    // In EUR at the sandbox 60000 EUR/BTC: display 0.01 × 60000 = 600.00, fee 0.0001 × 60000 = 6.00,
    // uniform 0.0101 × 60000 = 606.00.
    const p = await accepted(crypto({ depositAmount: '0.01' }, shop.businessId), shop);
    expect(p.expectedDepositDistributedUserServiceFee).toBe('0.0001');
    expect(p.expectedDepositAmount).toBe('0.0101');
    expect(p.displayCurrency).toBe('EUR');
    expect(p.expectedDisplayAmount).toBe('600.00');
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('6.00');
    expect(p.expectedUniformAmount).toBe('606.00');
  });

  it('rounds a fee that falls between cents HALF_EVEN (server/modules/money/decimal.ts)', async () => {
    // 2.50 × 2/100 × 50/100 = 0.025 → HALF_EVEN at 2 decimals → 0.02; uniform 2.50 + 0.02 = 2.52
    const p = await accepted(fiat({ displayAmount: '2.50' }, shop.businessId), shop);
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('0.02');
    expect(p.expectedUniformAmount).toBe('2.52');
    // 1.50 × 2/100 × 50/100 = 0.015 → HALF_EVEN → 0.02; uniform 1.52
    const q = await accepted(fiat({ displayAmount: '1.50' }, shop.businessId), shop);
    expect(q.expectedDisplayDistributedUserServiceFee).toBe('0.02');
    expect(q.expectedUniformAmount).toBe('1.52');
  });

  it('adds no fee when the user share is 0 % (the default business)', async () => {
    const p = await accepted(fiat({ displayAmount: '100.00' }));
    expect(p.expectedDisplayDistributedUserServiceFee).toBe('0.00');
    expect(p.expectedUniformAmount).toBe('100.00');
    expect(p.userServiceFeeDistributionPercentage).toBe('0');
  });
});

describe('idempotency on (businessId, clientPaymentId) (CONTRACT §4)', () => {
  it('answers the same body twice with 200 and the original record', async () => {
    const body = fiat();
    const first = await accepted(body);
    t.clock.advance(5_000);
    const second = await accepted(body);
    expect(second.paymentId).toBe(first.paymentId);
    expect(second).toEqual(first);
  });

  it('treats the same fields in another key order as the same body', async () => {
    const body = fiat();
    const first = await accepted(body);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect((await accepted(reordered)).paymentId).toBe(first.paymentId);
  });

  it('refuses the same clientPaymentId with a different body: 409 IDEMPOTENCY_CONFLICT', async () => {
    const body = fiat();
    const first = await accepted(body);
    expectProblem(await create({ ...body, displayAmount: '11.00' }), 409, 'IDEMPOTENCY_CONFLICT');
    expectProblem(await create({ ...body, locale: 'de' }), 409, 'IDEMPOTENCY_CONFLICT');
    const [row] = await t.db.sql<{ expected_display_amount: string }[]>`
      select expected_display_amount from payments where id = ${first.paymentId}`;
    expect(row!.expected_display_amount).toBe('10.00');
  });

  it('a retry that writes out the defaults is the same request; another value for a defaulted field is not', async () => {
    const body = fiat();
    const first = await accepted(body);
    const spelled = { ...body, type: 'ONE_TIME', rateType: 'FIXED', expirationMinutes: 30, redirectMode: 'PARENT' };
    expect((await accepted(spelled)).paymentId).toBe(first.paymentId);
    expectProblem(await create({ ...body, expirationMinutes: 31 }), 409, 'IDEMPOTENCY_CONFLICT');
    expectProblem(await create({ ...body, redirectMode: 'SELF' }), 409, 'IDEMPOTENCY_CONFLICT');
    // 0 is the 7 days it stands for; a REUSABLE payment has no expiry to spell.
    const week = await accepted(fiat({ expirationMinutes: 0 }));
    expect((await accepted(fiat({ clientPaymentId: week.clientPaymentId, expirationMinutes: 10_080 }))).paymentId).toBe(week.paymentId);
    const reusable = await accepted(fiat({ type: 'REUSABLE' }));
    expect((await accepted(fiat({ clientPaymentId: reusable.clientPaymentId, type: 'REUSABLE', rateType: 'FLOATING' }))).paymentId).toBe(reusable.paymentId);
  });

  it('a replay returns the original payment even where a new one would now be refused (the business narrowed its networks)', async () => {
    const shop = await t.addBusiness();
    const body = crypto({}, shop.businessId);
    const first = await accepted(body, shop);
    await updateBusiness(t.deps.database.db, shop.businessId, { allowedNetworks: { BTC: [] } });
    expectProblem(await create(crypto({}, shop.businessId), shop), 422, 'NETWORK_NOT_ALLOWED');
    expect((await accepted(body, shop)).paymentId).toBe(first.paymentId);
    // Still checked: the same clientPaymentId with another request is a conflict, not the refusal.
    expectProblem(await create({ ...body, depositAmount: '0.02' }, shop), 409, 'IDEMPOTENCY_CONFLICT');
  });

  it('lets two businesses use the same clientPaymentId', async () => {
    const other = await t.addBusiness();
    const clientPaymentId = newClientId('shared');
    const a = await accepted(fiat({ clientPaymentId }));
    const b = await accepted(fiat({ clientPaymentId }, other.businessId), other);
    expect(a.paymentId).not.toBe(b.paymentId);
  });

  it('creates exactly one payment and one event for 10 concurrent identical requests', async () => {
    const body = fiat({ clientPaymentId: newClientId('concurrent') });
    const responses = await Promise.all(Array.from({ length: 10 }, () => create(body)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    const ids = new Set(responses.map((r) => r.json().paymentInfo.paymentId));
    expect(ids.size).toBe(1);
    const rows = await t.db.sql<{ id: string }[]>`
      select id from payments where business_id = ${t.business.businessId} and client_payment_id = ${body.clientPaymentId as string}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe([...ids][0]);
    const events = await t.db.sql<{ to_status: string }[]>`select to_status from events where entity_type = 'payment' and entity_id = ${rows[0]!.id}`;
    expect(events.map((e) => e.to_status)).toEqual(['NEW']);
  });
});

describe('GET /v1/payments: listing (CONTRACT §4)', () => {
  let shop: TestBusiness;
  const created: string[] = [];
  beforeAll(async () => {
    shop = await t.addBusiness({ name: 'Listing shop' });
    // One second apart so "newest first" is defined by createdAt alone.
    for (let i = 0; i < 5; i++) {
      const body = i % 2 === 0 ? fiat({ clientPaymentId: `list-${i}` }, shop.businessId) : crypto({ clientPaymentId: `list-${i}` }, shop.businessId);
      created.push((await accepted(body, shop)).paymentId);
      t.clock.advance(1_000);
    }
  });
  const list = (query: string) => t.signed('GET', `/v1/payments${query}`, undefined, shop);

  it('pages through all 5 payments, newest first, following nextCursor until null', async () => {
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const page = PaymentListSchema.parse(res.json());
      pageSizes.push(page.items.length);
      seen.push(...page.items.map((p) => p.paymentId));
      cursor = page.nextCursor;
    } while (cursor !== null && pageSizes.length < 10);
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(new Set(seen).size).toBe(5);
    expect(seen).toEqual([...created].reverse());
  });

  it('filters by status', async () => {
    const pending = PaymentListSchema.parse((await list('?status=PENDING')).json());
    expect(pending.items.map((p) => p.clientPaymentId).sort()).toEqual(['list-1', 'list-3']);
    expect(pending.items.every((p) => p.status === 'PENDING')).toBe(true);
    const fresh = PaymentListSchema.parse((await list('?status=NEW')).json());
    expect(fresh.items.map((p) => p.clientPaymentId)).toEqual(['list-4', 'list-2', 'list-0']);
    expect(fresh.nextCursor).toBeNull();
  });

  it('filters by clientPaymentId', async () => {
    const res = await list('?clientPaymentId=list-2');
    expect(res.statusCode).toBe(200);
    const page = PaymentListSchema.parse(res.json());
    expect(page.items.map((p) => p.paymentId)).toEqual([created[2]]);
    expect(page.nextCursor).toBeNull();
    expect(PaymentListSchema.parse((await list('?clientPaymentId=nope')).json()).items).toEqual([]);
  });

  it('lists only the caller’s own payments', async () => {
    const mine = PaymentListSchema.parse((await t.signed('GET', '/v1/payments?limit=100')).json());
    expect(mine.items.some((p) => created.includes(p.paymentId))).toBe(false);
    expect(mine.items.every((p) => p.businessId === t.business.businessId)).toBe(true);
  });

  it('refuses a bogus cursor with 400', async () => {
    expectInvalid(await list('?cursor=bogus'), ['cursor']);
  });

  // Cursors are opaque to clients but decoded by the server: a forged one must be a 400, never a 5xx (CONTRACT §3).
  it.each([
    ['a non-UUID id of 36 dashes', `2026-11-22T12:00:00.000Z|${'-'.repeat(36)}`],
    ['a non-UUID id of 36 zeros', `2026-11-22T12:00:00.000Z|${'0'.repeat(36)}`],
    ['a date before PostgreSQL’s range (year −271821)', `-271821-04-20T00:00:00.000Z|${randomUUID()}`],
  ])('refuses a forged cursor with %s with 400, not 5xx', async (_what, decoded) => {
    expectInvalid(await list(`?cursor=${Buffer.from(decoded).toString('base64url')}`), ['cursor']);
  });

  it.each(['0', '101', '-1', '1.5', 'ten', '1e1', '%201', '0x10', '10.0', ''])('refuses limit=%s with 400', async (limit) => {
    expectInvalid(await list(`?limit=${limit}`), ['limit']);
  });

  it('accepts limit=1 and limit=100', async () => {
    expect(PaymentListSchema.parse((await list('?limit=1')).json()).items).toHaveLength(1);
    expect(PaymentListSchema.parse((await list('?limit=100')).json()).items).toHaveLength(5);
  });

  it('refuses an unknown status with 400', async () => {
    expectInvalid(await list('?status=PAID'), ['status']);
  });
});

describe('GET /v1/payments/:paymentId', () => {
  it('returns the caller’s own payment', async () => {
    const p = await accepted(fiat());
    const res = await t.signed('GET', `/v1/payments/${p.paymentId}`);
    expect(res.statusCode).toBe(200);
    expect(PaymentRecordSchema.parse(res.json())).toEqual(p);
  });

  it('answers 404 for another business’s payment', async () => {
    const other = await t.addBusiness();
    const theirs = await accepted(fiat({}, other.businessId), other);
    expectProblem(await t.signed('GET', `/v1/payments/${theirs.paymentId}`), 404, 'NOT_FOUND');
  });

  it('answers 404 for an unknown UUID and for a non-UUID id', async () => {
    expectProblem(await t.signed('GET', `/v1/payments/${randomUUID()}`), 404, 'NOT_FOUND');
    expectProblem(await t.signed('GET', '/v1/payments/not-a-uuid'), 404, 'NOT_FOUND');
    expectProblem(await t.signed('GET', `/v1/payments/${'-'.repeat(36)}`), 404, 'NOT_FOUND');
  });
});

describe('a refused request changes nothing', () => {
  it.each([
    { what: '400 invalid body', status: 400, code: 'VALIDATION_FAILED', body: () => fiat({ displayAmount: '-1' }) },
    { what: '400 bad network pairing', status: 400, code: 'VALIDATION_FAILED', body: () => crypto({ network: 'ETH' }) },
    { what: '403 other business', status: 403, code: 'FORBIDDEN_BUSINESS', body: () => fiat({}, randomUUID()) },
  ])('$what: no payment, no event', async ({ status, code, body }) => {
    const before = await countRows();
    expectProblem(await create(body()), status, code);
    expect(await countRows()).toEqual(before);
  });

  it('409 idempotency conflict: no second payment, no event', async () => {
    const body = fiat();
    await accepted(body);
    const before = await countRows();
    expectProblem(await create({ ...body, displayAmount: '99.00' }), 409, 'IDEMPOTENCY_CONFLICT');
    expect(await countRows()).toEqual(before);
  });

  it('422 network not allowed: no payment, no event', async () => {
    const shop = await t.addBusiness({ allowedNetworks: { BTC: [] } });
    const before = await countRows();
    expectProblem(await create(crypto({}, shop.businessId), shop), 422, 'NETWORK_NOT_ALLOWED');
    expect(await countRows()).toEqual(before);
  });
});
