/**
 * Live rates and sanctions screening wired into Kassa (issue 14, CONTRACT §11),
 * through the real app in live mode (KASSA_SANDBOX=false): two local rate
 * doubles in Coinbase's and Kraken's formats, and an OFAC SDN list imported
 * from a file in the real advanced schema.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importSanctionsList } from '../../../server/compose.js';
import { ingestDeposit } from '../../../server/modules/deposits/index.js';
import { chooseCurrency } from '../../../server/modules/payments/index.js';
import { postEntries } from '../../../server/modules/ledger/index.js';
import { Dec } from '../../../server/modules/money/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { watchOnlyChains } from '../../helpers/watch-only.js';
import { coinbaseRates, krakenTickerAnswer } from '../../adapters/rates/fixtures.js';
import { startHttpDouble, type HttpDouble } from '../../adapters/rates/http-double.js';

const SDN_FILE = fileURLToPath(new URL('../../adapters/screening/fixtures/sdn_advanced.sample.xml', import.meta.url));
/** Listed in the fixture (BTC) and, in mixed case, an EVM address. */
const SANCTIONED_BTC = 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh';
const SANCTIONED_ETH_MIXED = '0x79B36A05A29A73C1DA1AE7723672DD89738A4742';

let t: TestApp;
let coinbase: HttpDouble;
let kraken: HttpDouble;

/** Coinbase: 50 000 EUR and 2 500 EUR per BTC/ETH; Kraken: 50 400 and 2 520. Medians: 50 200 and 2 510. */
function healthyDoubles() {
  coinbase.answer((req) => {
    const fiat = new URL(req.url, 'http://x').searchParams.get('currency') ?? 'EUR';
    return fiat === 'EUR' ? { body: coinbaseRates('EUR', { BTC: '0.00002', ETH: '0.0004' }) } : { body: coinbaseRates(fiat, {}) };
  });
  kraken.answer(() => ({ body: krakenTickerAnswer({ XXBTZEUR: '50400.00000', XETHZEUR: '2520.00000' }) }));
}

const refresh = () => t.deps.background.find((b) => b.name === 'rates refresher')!.runOnce();
/** A BTC payment created while the rates are fresh. */
async function btcPayment(clientPaymentId: string) {
  const created = await t.signed('POST', '/v1/payments', {
    clientPaymentId, businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC',
  });
  expect(created.statusCode, created.body).toBe(200);
  return created.json().paymentInfo as { paymentId: string; walletAddress: string };
}

beforeAll(async () => {
  coinbase = await startHttpDouble();
  kraken = await startHttpDouble();
  healthyDoubles();
  t = await startTestApp({
    env: {
      KASSA_SANDBOX: 'false',
      KASSA_RATE_SOURCES: 'coinbase,kraken',
      KASSA_RATES_COINBASE_URL: coinbase.url,
      KASSA_RATES_KRAKEN_URL: kraken.url,
      KASSA_RATES_MIN_SOURCES: '2',
      KASSA_RATES_MAX_AGE_S: '120',
      KASSA_SANCTIONS_SOURCES: 'ofac',
    },
    // BTC and ETH offered watch-only: this file is about rates and screening, not the chains.
    live: watchOnlyChains(['BTC', 'ETH']),
  });
});
afterAll(async () => {
  await t?.close();
  await coinbase?.close();
  await kraken?.close();
});

describe('live rates', () => {
  it('an EUR payment is priced at the median of the two sources, and records both', async () => {
    await refresh();
    const created = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'live-eur-1', businessId: t.business.businessId, locale: 'en', displayCurrency: 'EUR', displayAmount: '502.00',
    });
    expect(created.statusCode, created.body).toBe(200);
    const paymentId = created.json().paymentInfo.paymentId as string;
    const chosen = await chooseCurrency(t.deps, paymentId, { depositCurrency: 'BTC', network: 'BTC' });
    // 502.00 EUR at 50 200 EUR/BTC (median of 50 000 and 50 400) = 0.01 BTC exactly.
    expect(new Dec(chosen.expectedDepositAmount!).toFixed()).toBe('0.01');
    expect(chosen.pricingRate).toMatchObject({ from: 'BTC', to: 'EUR', rate: '50200', sources: ['coinbase', 'kraken'] });

    const rates = await t.signed('GET', '/v1/rates?from=BTC&to=EUR');
    expect(rates.statusCode, rates.body).toBe(200);
    expect(rates.json().rates).toEqual({ BTC: { EUR: '50200' } });
    expect(rates.json().sources.map((s: { name: string; fresh: boolean }) => [s.name, s.fresh])).toEqual([
      ['coinbase', true],
      ['kraken', true],
    ]);
  });

  it('with one source down past the age limit, pricing answers 503 RATES_UNAVAILABLE with Retry-After; back once it recovers', async () => {
    kraken.answer(() => ({ status: 500, body: { error: ['EService:Unavailable'] } }));
    t.clock.advance(121_000);
    await refresh(); // Coinbase fresh again, Kraken fails: one fresh source, quorum is two
    const body = { clientPaymentId: 'live-btc-2', businessId: t.business.businessId, locale: 'en', depositCurrency: 'BTC', depositAmount: '0.01', network: 'BTC' };
    const refused = await t.signed('POST', '/v1/payments', body);
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json().code).toBe('RATES_UNAVAILABLE');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const [row] = await t.db.sql`select count(*)::int as n from payments where client_payment_id = 'live-btc-2'`;
    expect(row!.n).toBe(0);
    const rates = await t.signed('GET', '/v1/rates?from=BTC&to=EUR');
    expect(rates.statusCode).toBe(503);

    healthyDoubles();
    t.clock.advance(31_000); // past the refresh interval: the next round may run
    await refresh();
    const accepted = await t.signed('POST', '/v1/payments', body);
    expect(accepted.statusCode, accepted.body).toBe(200);
  });
});

describe('sanctions screening (OFAC SDN)', () => {
  it('before any list is imported, /ready says sanctions "missing" and a deposit waits in COMPLIANCE_REVIEW', async () => {
    const ready = await t.app.inject({ url: '/ready' });
    expect(ready.json()).toMatchObject({ status: 'ready', sanctions: 'missing' });
    const payment = await btcPayment('live-unscreened');
    const result = await ingestDeposit(t.deps, {
      network: 'BTC', txHash: 'a'.repeat(64), outputIndex: 0, fromAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      toAddress: payment.walletAddress, currency: 'BTC', amount: '0.01', state: 'CONFIRMED', confirmations: 6,
    });
    expect(result).toMatchObject({ outcome: 'CREATED', status: 'COMPLIANCE_REVIEW' });
    const [d] = await t.db.sql`select risk_assessment from deposits where id = ${(result as { depositId: string }).depositId}`;
    expect(d!.risk_assessment.addressOwner.category).toBe('unscreened');
  });

  it('an address imported from an SDN file is blocked as a deposit sender (refund ILLICIT_DEPOSIT) and refused as a withdrawal destination', async () => {
    const counts = await importSanctionsList(t.db, SDN_FILE);
    expect(counts.perNetwork.BTC).toBeGreaterThan(0);
    expect((await t.app.inject({ url: '/ready' })).json().sanctions).toBe('ok');

    const payment = await btcPayment('live-sanctioned');
    const result = await ingestDeposit(t.deps, {
      network: 'BTC', txHash: 'b'.repeat(64), outputIndex: 0, fromAddress: SANCTIONED_BTC,
      toAddress: payment.walletAddress, currency: 'BTC', amount: '0.01', state: 'CONFIRMED', confirmations: 6,
    });
    expect(result).toMatchObject({ outcome: 'CREATED', status: 'BLOCKED' });
    const read = (await t.signed('GET', `/v1/payments/${payment.paymentId}`)).json();
    const deposit = read.deposits[0];
    expect(deposit.riskScore).toBe('10.0');
    expect(deposit.refund.reason).toBe('ILLICIT_DEPOSIT');

    // Funds to withdraw, so only the screening can refuse it.
    await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '100000', kind: 'TEST' }], t.clock.now());
    const withdrawal = await t.signed('POST', '/v1/withdrawals', {
      clientWithdrawalId: 'w-sanctioned', businessId: t.business.businessId, withdrawCurrency: 'ETH', network: 'ETH', address: SANCTIONED_ETH_MIXED, amount: '0.1',
    });
    expect(withdrawal.statusCode, withdrawal.body).toBe(422);
    expect(withdrawal.json().code).toBe('ADDRESS_SANCTIONED');
    const [w] = await t.db.sql`select count(*)::int as n from withdrawals where client_withdrawal_id = 'w-sanctioned'`;
    expect(w!.n).toBe(0);
  });
});
