import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatedPaymentResponseSchema, PaymentListSchema, PaymentRecordSchema } from '../../../server/modules/payments/payment-record.schema.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const fiatBody = (overrides: Record<string, unknown> = {}) => ({
  clientPaymentId: `order-${Math.random().toString(36).slice(2)}`,
  businessId: t.business.businessId,
  locale: 'en-US',
  displayCurrency: 'EUR',
  displayAmount: '25.00',
  ...overrides,
});

describe('POST /v1/payments', () => {
  it('creates a fiat payment: NEW, every required field, checkout URL', async () => {
    const res = await t.signed('POST', '/v1/payments', fiatBody({ clientPaymentId: 'order-1' }));
    expect(res.statusCode).toBe(200);
    const body = CreatedPaymentResponseSchema.parse(res.json());
    const p = body.paymentInfo;
    expect(p.status).toBe('NEW');
    expect(p.type).toBe('ONE_TIME');
    expect(p.rateType).toBe('FIXED');
    expect(p.processorType).toBe('BLOCKCHAIN');
    expect(p.expirationMinutes).toBe(30);
    expect(p.clientPaymentId).toBe('order-1');
    expect(p.displayCurrency).toBe('EUR');
    expect(p.expectedDisplayAmount).toBe('25.00');
    expect(p.expectedUniformAmount).toBe('25.00');
    expect(p.actualDisplayAmount).toBe('0.00');
    expect(p.paymentInitiatedAt).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(p.url).toBe(body.paymentUrl);
    expect(body.paymentUrl).toMatch(/^http:\/\/kassa\.test\/checkout\/[A-Za-z0-9_-]{22}$/);
    expect(p.deposits).toEqual([]);
  });

  it('creates a crypto payment: PENDING with a BTC address', async () => {
    const res = await t.signed('POST', '/v1/payments', {
      clientPaymentId: 'btc-1', businessId: t.business.businessId, locale: 'de', depositCurrency: 'BTC', depositAmount: '0.0025', network: 'BTC',
    });
    expect(res.statusCode).toBe(200);
    const p = PaymentRecordSchema.parse(res.json().paymentInfo);
    expect(p.status).toBe('PENDING');
    expect(p.walletAddress).toMatch(/^bc1q[02-9ac-hj-np-z]{38}$/);
    expect(p.expectedDepositAmount).toBe('0.0025');
    // 0.0025 BTC × 60000 EUR/BTC = 150.00 EUR (sandbox table)
    expect(p.expectedDisplayAmount).toBe('150.00');
    expect(p.expectedUniformAmount).toBe('150.00');
  });

  it('reads it back and lists it', async () => {
    const created = (await t.signed('POST', '/v1/payments', fiatBody())).json();
    const got = await t.signed('GET', `/v1/payments/${created.paymentInfo.paymentId}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(created.paymentInfo);
    const list = await t.signed('GET', '/v1/payments?limit=2');
    expect(list.statusCode).toBe(200);
    const page = PaymentListSchema.parse(list.json());
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).not.toBeNull();
  });
});
