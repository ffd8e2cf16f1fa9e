/** The checkout view (pure): what is still due beside transfers on their way, the customer's fee share, merchant and test mode. */
import { describe, expect, it } from 'vitest';
import { paymentUri } from '../../../server/modules/networks/index.js';
import { toCheckoutView, viewVersion, type CheckoutContext } from '../../../server/modules/payments/checkout-view.rules.js';
import type { PaymentRecord } from '../../../server/modules/payments/payment-record.rules.js';

const ctx: CheckoutContext = { merchantName: 'Corner Books', testMode: true, paymentUri: (network, p) => paymentUri({ network, ...p }), now: new Date(1_800_000_060_000) };

function record(over: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    status: 'AWAITING', type: 'ONE_TIME', locale: 'en', expirationMinutes: 30, paymentInitiatedAt: 1_800_000_000, redirectMode: 'PARENT',
    depositCurrency: 'BTC', expectedNetwork: 'BTC', expectedDepositAmount: '0.01', actualDepositAmount: '0', walletAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    deposits: [], ...over,
  } as PaymentRecord;
}

const deposit = (status: string, amount: string, currency = 'BTC') =>
  ({ id: `d-${status}-${amount}`, status, depositCurrency: currency, network: 'BTC', depositAmount: amount, transactionId: 'tx', depositReceivedAt: 1_800_000_100 }) as unknown as PaymentRecord['deposits'][number];

describe('toCheckoutView', () => {
  it("carries the server's time, which the view's version leaves out (it changes every second, the content does not)", () => {
    const first = toCheckoutView(record(), [], ctx);
    const later = toCheckoutView(record(), [], { ...ctx, now: new Date(1_800_000_125_000) });
    expect([first.serverTime, later.serverTime]).toEqual([1_800_000_060, 1_800_000_125]);
    expect(viewVersion(later)).toBe(viewVersion(first));
    expect(viewVersion(toCheckoutView(record({ actualDepositAmount: '0.001' }), [], ctx))).not.toBe(viewVersion(first));
  });

  it("a refund says what reaches the customer: its amount less the network fee (never below zero), the amount kept beside it", () => {
    const refunded = (amount: string, fee: string, currency = 'USDT') =>
      ({ ...deposit('UNPROCESSABLE', amount, currency), refund: { type: 'FULL', status: 'PENDING', reason: 'CURRENCY_MISMATCH', amount, fee } }) as unknown as PaymentRecord['deposits'][number];
    const v = toCheckoutView(record({ deposits: [refunded('10', '1.5'), refunded('0.0001', '0.0002', 'BTC')] }), [], ctx);
    expect(v.deposits.map((d) => d.refund && [d.refund.amount, d.refund.sent])).toEqual([['10', '8.5'], ['0.0001', '0']]);
  });

  it('stillDue: the remainder less the transfers on their way (unconfirmed, in review), never below zero', () => {
    expect(toCheckoutView(record(), [], ctx)).toMatchObject({ remaining: '0.01', stillDue: '0.01' });
    const review = toCheckoutView(record({ deposits: [deposit('COMPLIANCE_REVIEW', '0.004')] }), [], ctx);
    expect(review).toMatchObject({ paid: '0', remaining: '0.01', stillDue: '0.006' });
    const mixed = record({ actualDepositAmount: '0.002', deposits: [deposit('CONFIRMED', '0.002'), deposit('UNCONFIRMED', '0.003'), deposit('COMPLIANCE_REVIEW', '0.001')] });
    expect(toCheckoutView(mixed, [], ctx)).toMatchObject({ paid: '0.002', remaining: '0.008', stillDue: '0.004' });
    // Refused transfers and another currency's do not count; more on its way than due is zero, not negative.
    const other = record({ deposits: [deposit('BLOCKED', '0.005'), deposit('UNCONFIRMED', '5', 'USDT')] });
    expect(toCheckoutView(other, [], ctx).stillDue).toBe('0.01');
    expect(toCheckoutView(record({ deposits: [deposit('UNCONFIRMED', '0.02')] }), [], ctx).stillDue).toBe('0');
    // Exact decimals: no float rounding on satoshi amounts.
    expect(toCheckoutView(record({ expectedDepositAmount: '0.30000001', deposits: [deposit('UNCONFIRMED', '0.1')] }), [], ctx).stillDue).toBe('0.20000001');
  });

  it('stillDue is null where nothing is due by amount (NEW, REUSABLE)', () => {
    expect(toCheckoutView(record({ status: 'NEW', depositCurrency: undefined, expectedDepositAmount: undefined }), [], ctx).stillDue).toBeNull();
    expect(toCheckoutView(record({ type: 'REUSABLE' }), [], ctx).stillDue).toBeNull();
  });

  it("customerFee: the customer's share in the display currency, else in the deposit currency; null when zero", () => {
    const fiat = record({ displayCurrency: 'EUR', expectedDisplayAmount: '600.00', expectedDisplayDistributedUserServiceFee: '3.00', expectedDepositDistributedUserServiceFee: '0.00005' });
    const view = toCheckoutView(fiat, [], ctx);
    expect(view.customerFee).toEqual({ amount: '3.00', currency: 'EUR' });
    expect(view.displayAmount).toBe('603.00');
    expect(toCheckoutView(record({ expectedDepositDistributedUserServiceFee: '0.00005' }), [], ctx).customerFee).toEqual({ amount: '0.00005', currency: 'BTC' });
    expect(toCheckoutView(record({ displayCurrency: 'EUR', expectedDisplayDistributedUserServiceFee: '0.00' }), [], ctx).customerFee).toBeNull();
    expect(toCheckoutView(record(), [], ctx).customerFee).toBeNull();
  });

  it('carries the merchant name and the test mode flag as given, and nothing else of the business', () => {
    const live = toCheckoutView(record({ businessId: 'b-1' } as Partial<PaymentRecord>), [], { ...ctx, merchantName: 'Shop', testMode: false });
    expect(live).toMatchObject({ merchantName: 'Shop', testMode: false });
    expect(JSON.stringify(live)).not.toContain('b-1');
  });
});

describe('the payment URI', () => {
  it("is the installation's for the payment's network, address and amount; null where the installation serves none", () => {
    expect(toCheckoutView(record(), [], ctx).paymentUri).toBe('bitcoin:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4?amount=0.01');
    const asked: unknown[] = [];
    const live: CheckoutContext = { ...ctx, paymentUri: (network, p) => (asked.push({ network, ...p }), network === 'BTC' ? 'bitcoin:from-the-node' : null) };
    expect(toCheckoutView(record(), [], live).paymentUri).toBe('bitcoin:from-the-node');
    expect(asked).toEqual([{ network: 'BTC', currency: 'BTC', address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: '0.01', tag: undefined }]);
    expect(toCheckoutView(record({ expectedNetwork: 'LTC', depositCurrency: 'LTC' }), [], live).paymentUri).toBeNull();
  });

  it('asks for what is still due: the rest after a partial payment (confirmed or on its way); the whole when nothing more is due or for a REUSABLE link', () => {
    const uri = (over: Partial<PaymentRecord>) => toCheckoutView(record(over), [], ctx).paymentUri;
    const address = 'bitcoin:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4?amount=';
    expect(uri({ actualDepositAmount: '0.004', deposits: [deposit('CONFIRMED', '0.004')] })).toBe(`${address}0.006`);
    expect(uri({ actualDepositAmount: '0.004', deposits: [deposit('CONFIRMED', '0.004'), deposit('UNCONFIRMED', '0.001')] })).toBe(`${address}0.005`);
    expect(uri({ deposits: [deposit('UNCONFIRMED', '0.01')] })).toBe(`${address}0.01`);
    expect(uri({ type: 'REUSABLE', actualDepositAmount: '0.03', deposits: [deposit('CONFIRMED', '0.03')] })).toBe(`${address}0.01`);
  });
});
