import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import { request } from 'node:http';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckoutRouter } from '../../../server/edges/checkout/checkout-router.js';
import type { CheckoutView } from '../../../server/modules/payments/checkout-view.rules.js';
import { LIVE_STREAMS } from '../../../server/platform/rate-limit.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { eventually, startTestWorker } from '../../helpers/worker.js';

let t: TestApp;
let worker: Runner;
let base: string;

beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '0' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

const client = () =>
  createTRPCClient<CheckoutRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: `${base}/checkout/api`, EventSource }),
        false: httpBatchLink({ url: `${base}/checkout/api` }),
      }),
    ],
  });

async function fiatPayment() {
  const res = await t.signed('POST', '/v1/payments', {
    clientPaymentId: `c-${Math.random()}`, businessId: t.business.businessId, locale: 'fr_FR', displayCurrency: 'EUR', displayAmount: '600.00',
  });
  return (res.json().paymentUrl as string).split('/').pop()!;
}

describe('checkout router', () => {
  it('shows a NEW payment with priced options, then the chosen currency', async () => {
    const token = await fiatPayment();
    const kassa = client();
    const view = await kassa.get.query({ token });
    expect(view.status).toBe('NEW');
    expect(view.language).toBe('fr');
    expect(view.displayAmount).toBe('600.00');
    // 600 EUR / 60000 EUR per BTC = 0.01 BTC
    expect(view.options).toContainEqual({ currency: 'BTC', network: 'BTC', amount: '0.01' });
    expect(JSON.stringify(view)).not.toContain(t.business.businessId);
    const chosen = await kassa.choose.mutate({ token, depositCurrency: 'BTC', network: 'BTC' });
    expect(chosen.status).toBe('PENDING');
    expect(chosen.paymentUri).toBe(`bitcoin:${chosen.walletAddress}?amount=0.01`);
    expect(chosen.options).toEqual([]);
    // Another currency now is refused, and the refusal names no paymentId (the checkout never shows it).
    const refused = await kassa.choose.mutate({ token, depositCurrency: 'ETH', network: 'ETH' }).then(() => null, (e: unknown) => e as Error & { data?: { code: string } });
    expect(refused?.data?.code).toBe('CONFLICT');
    expect(refused?.message).toBe('This payment is PENDING; its currency is already fixed.');
    const [row] = await t.db.sql`select id from payments where checkout_token = ${token}`;
    expect(refused?.message).not.toContain(row!.id);
  });

  it('a NEW payment that expired before any choice: the refusal says no currency can be chosen now, not that one is fixed', async () => {
    const token = await fiatPayment();
    await t.db.sql`update payments set status = 'EXPIRED' where checkout_token = ${token}`;
    const refused = await client().choose.mutate({ token, depositCurrency: 'BTC', network: 'BTC' }).then(() => null, (e: unknown) => e as Error);
    expect(refused?.message).toBe('This payment is EXPIRED; a currency can no longer be chosen.');
  });

  it('refuses an unknown token with NOT_FOUND', async () => {
    await expect(client().get.query({ token: 'AAAAAAAAAAAAAAAAAAAAAA' })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
  });

  it('refuses an unknown key with BAD_REQUEST naming it, and changes nothing', async () => {
    const token = await fiatPayment();
    const kassa = client();
    // The widget's client is typed; a hand-written one can send anything.
    const loose = kassa as unknown as {
      get: { query: (input: object) => Promise<unknown> };
      choose: { mutate: (input: object) => Promise<unknown> };
    };
    const unknownKey = { data: { code: 'BAD_REQUEST', httpStatus: 400, kassaCode: 'VALIDATION_FAILED', fieldErrors: [{ field: 'amount', message: expect.stringContaining('unknown field') }] } };
    await expect(loose.get.query({ token, amount: '1' })).rejects.toMatchObject(unknownKey);
    await expect(loose.choose.mutate({ token, depositCurrency: 'BTC', network: 'BTC', amount: '1' })).rejects.toMatchObject(unknownKey);
    // The refused choice fixed nothing: the payment is still NEW with every option offered.
    const view = await kassa.get.query({ token });
    expect(view.status).toBe('NEW');
    expect(view.options).toContainEqual({ currency: 'BTC', network: 'BTC', amount: '0.01' });
    const [row] = await t.db.sql`select status, deposit_currency from payments where checkout_token = ${token}`;
    expect(row).toEqual({ status: 'NEW', deposit_currency: null });
  });

  it('pushes a deposit to a subscriber without polling', async () => {
    const token = await fiatPayment();
    const kassa = client();
    const chosen = await kassa.choose.mutate({ token, depositCurrency: 'BTC', network: 'BTC' });
    const seen: CheckoutView[] = [];
    const sub = kassa.updates.subscribe({ token }, { onData: (e) => seen.push(e.data) });
    await eventually(async () => seen.length >= 1, 5000, 'first view');
    expect(seen[0]!.status).toBe('PENDING');
    const row = await t.db.sql`select id from payments where checkout_token = ${token}`;
    await t.signed('POST', `/v1/test-helpers/payments/${row[0]!.id}/deposits`, { depositCurrency: 'BTC', network: 'BTC', amount: chosen.depositAmount });
    const final = await eventually(async () => seen.find((v) => v.status === 'DEPOSITED'), 10_000, 'DEPOSITED pushed');
    expect(final.deposits[0]!.status).toBe('CONFIRMED');
    expect(final.remaining).toBe('0');
    sub.unsubscribe();
  });

  it(`holds at most ${LIVE_STREAMS.perToken} live streams per payment: the next is refused until one closes`, async () => {
    const token = await fiatPayment();
    const url = `${base}/checkout/api/updates?input=${encodeURIComponent(JSON.stringify({ token }))}`;
    /** Open a stream and read until its first event: the view, or the refusal. */
    const open = async () => {
      const abort = new AbortController();
      const res = await fetch(url, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
      const reader = res.body!.getReader();
      let text = '';
      // tRPC's stream opens with a `connected` event; the first data event is the view or the refusal.
      while (!/"status"|TOO_MANY_REQUESTS/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
      return { text, close: () => abort.abort() };
    };
    const held = [];
    for (let i = 0; i < LIVE_STREAMS.perToken; i++) held.push(await open());
    try {
      expect(held.every((s) => s.text.includes('"status":"NEW"'))).toBe(true);
      expect(t.deps.limits.openStreams(token, null)).toBe(LIVE_STREAMS.perToken);
      // The request limits count streams started; this counts the ones held.
      const refused = await open();
      expect(refused.text).toContain('TOO_MANY_REQUESTS');
      expect(refused.text).toContain(`At most ${LIVE_STREAMS.perToken} live checkout connections per payment`);
      refused.close();
      // Closing one gives its slot back (the server sees the socket end); then a new one is served.
      held.pop()!.close();
      await eventually(async () => t.deps.limits.openStreams(token, null) === LIVE_STREAMS.perToken - 1, 5_000, 'a released slot');
      const again = await open();
      expect(again.text).toContain('"status":"NEW"');
      held.push(again);
    } finally {
      for (const s of held) s.close();
    }
    await eventually(async () => t.deps.limits.openStreams(token, null) === 0, 5_000, 'every slot released');
    expect(t.deps.limits.openStreams(null, '127.0.0.1')).toBe(0);
  });

  it('gives the slot back of a stream the client drops at any moment, even before its first view (found by a review: one link could take every slot)', async () => {
    const token = await fiatPayment();
    const { hostname, port } = new URL(base);
    const path = `/checkout/api/updates?input=${encodeURIComponent(JSON.stringify({ token }))}`;
    // One at a time (each holds a slot), dropped 2–50 ms after sending: before, during and after the first view is written.
    for (let round = 0; round < 3; round++) {
      for (const ms of [2, 5, 10, 15, 20, 30, 40, 50]) {
        const req = request({ host: hostname, port, path, headers: { accept: 'text/event-stream' }, agent: false });
        req.on('error', () => {});
        req.end();
        await new Promise((done) => setTimeout(done, ms));
        req.destroy();
        await new Promise((done) => setTimeout(done, 30));
      }
    }
    await eventually(async () => t.deps.limits.openStreams(token, null) === 0, 5_000, 'every dropped stream released');
    expect(t.deps.limits.openStreams(null, '127.0.0.1')).toBe(0);
  });
});
