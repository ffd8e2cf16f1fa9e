import { createServer } from 'node:http';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyCallback } from '../../server/callbacks/signing.js';
import { postEntries } from '../../server/ledger/ledger.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { eventually, startTestWorker } from '../helpers/worker.js';

let t: TestApp;
let worker: Runner;
const received: { headers: Record<string, unknown>; body: string }[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push({ headers: req.headers, body });
    res.writeHead(received.length < 2 ? 500 : 200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const port = (receiver.address() as { port: number }).port;
  t = await startTestApp({ env: { KASSA_SANDBOX_BROADCAST_DELAY_S: '0', KASSA_CALLBACK_RETRY_INTERVAL_S: '1' }, business: { withdrawalCallbackUrl: `http://127.0.0.1:${port}/cb` } });
  t.clock.current = new Date();
  worker = await startTestWorker(t.deps);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
  receiver.close();
});

it('withdraws, completes and delivers a signed callback after one failure', async () => {
  await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000', kind: 'TEST' }], new Date());
  const res = await t.signed('POST', '/v1/withdrawals', {
    clientWithdrawalId: 'w1', businessId: t.business.businessId, withdrawCurrency: 'USDT', network: 'TRX',
    address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', amount: '100',
  });
  expect(res.statusCode, res.body).toBe(200);
  const w = res.json();
  expect(w.status).toBe('PROCESSING');
  await eventually(async () => received.length >= 2, 15_000, 'two attempts');
  const body = verifyCallback(t.business.callbackSecret, received[1]!.headers as Record<string, string>, received[1]!.body);
  expect(body.status).toBe('COMPLETED');
  expect(body.withdrawalId).toBe(w.withdrawalId);
  expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id']);
  const got = (await t.signed('GET', `/v1/withdrawals/${w.withdrawalId}`)).json();
  expect(got.status).toBe('COMPLETED');
});
