/**
 * Standard Webhooks signing of callbacks (CONTRACT §6) and the fixed retry
 * schedule. The signature is checked against an independent HMAC, and
 * `verifyCallback` (what merchants use) against every failure mode.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newWebhookId, nextAttemptAt } from '../../../server/modules/callbacks/delivery.service.js';
import {
  CallbackVerificationError, callbackHeaders, signCallback, verifyCallback,
} from '../../../server/modules/callbacks/signing.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
const NOW = new Date('2026-03-01T10:00:00.000Z');
const TS = Math.floor(NOW.getTime() / 1000);
const body = JSON.stringify({ status: 'COMPLETED', withdrawalId: 'w-1', actualWithdrawAmount: '0.5' });
const id = 'msg_2xk9YQ7mTrVd4bW1nLc3pA';

/** The signature computed here, without Kassa's code: base64 HMAC-SHA256 keyed with the bytes after `whsec_`. */
function independentSignature(key: string, msgId: string, ts: number, payload: string): string {
  const keyBytes = Buffer.from(key.slice('whsec_'.length), 'base64');
  return createHmac('sha256', keyBytes).update(`${msgId}.${ts}.${payload}`).digest('base64');
}

const headersFor = (overrides: Record<string, string | undefined> = {}, ts = TS, payload = body) => {
  const h: Record<string, string | undefined> = {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': `v1,${independentSignature(secret, id, ts, payload)}`,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>;
};

function refusal(fn: () => unknown): CallbackVerificationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CallbackVerificationError);
    return error as CallbackVerificationError;
  }
  throw new Error('expected verifyCallback to refuse');
}

describe('signCallback and callbackHeaders', () => {
  it('signs v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>"> keyed with the base64-decoded secret', () => {
    expect(signCallback(secret, id, TS, body)).toBe(`v1,${independentSignature(secret, id, TS, body)}`);
  });

  it('builds the three Standard Webhooks headers with a UNIX-seconds timestamp', () => {
    const h = callbackHeaders(secret, id, body, NOW);
    expect(h['webhook-id']).toBe(id);
    expect(h['webhook-timestamp']).toBe(String(TS));
    expect(h['webhook-signature']).toBe(`v1,${independentSignature(secret, id, TS, body)}`);
    expect(h['content-type']).toBe('application/json');
  });

  it('with several secrets (a rotation\'s overlap) signs with each, space-separated, the first given first', () => {
    const old = `whsec_${Buffer.from('an older secret of 24 bytes!').toString('base64')}`;
    const h = callbackHeaders([secret, old], id, body, NOW);
    expect(h['webhook-signature']).toBe(`v1,${independentSignature(secret, id, TS, body)} v1,${independentSignature(old, id, TS, body)}`);
    expect(verifyCallback(secret, h, body, { now: NOW }).withdrawalId).toBe('w-1');
    expect(verifyCallback(old, h, body, { now: NOW }).withdrawalId).toBe('w-1');
    expect(() => verifyCallback(`whsec_${Buffer.from('a third secret entirely!').toString('base64')}`, h, body, { now: NOW })).toThrow('no matching signature');
  });

  it('signs differently per timestamp and per id', () => {
    expect(signCallback(secret, id, TS, body)).not.toBe(signCallback(secret, id, TS + 1, body));
    expect(signCallback(secret, id, TS, body)).not.toBe(signCallback(secret, `${id}x`, TS, body));
  });

  it('makes unique msg_ ids', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newWebhookId()));
    expect(ids.size).toBe(100);
    for (const i of ids) expect(i).toMatch(/^msg_[A-Za-z0-9_-]{16,}$/);
  });
});

describe('verifyCallback accepts', () => {
  it('a correctly signed callback and returns its body', () => {
    expect(verifyCallback(secret, headersFor(), body, { now: NOW })).toEqual(JSON.parse(body));
  });

  it('the headers of callbackHeaders, and a Buffer body', () => {
    expect(verifyCallback(secret, callbackHeaders(secret, id, body, NOW), Buffer.from(body), { now: NOW }).withdrawalId).toBe('w-1');
  });

  it('a fetch Headers object', () => {
    const h = new Headers(headersFor());
    expect(verifyCallback(secret, h, body, { now: NOW }).status).toBe('COMPLETED');
  });

  it('several space-separated signatures when one of them matches (wrong one first)', () => {
    const good = `v1,${independentSignature(secret, id, TS, body)}`;
    const wrong = `v1,${independentSignature(otherSecret, id, TS, body)}`;
    expect(verifyCallback(secret, headersFor({ 'webhook-signature': `${wrong} ${good}` }), body, { now: NOW }).status).toBe('COMPLETED');
    expect(verifyCallback(secret, headersFor({ 'webhook-signature': `${good} ${wrong}` }), body, { now: NOW }).status).toBe('COMPLETED');
    expect(verifyCallback(secret, headersFor({ 'webhook-signature': `v2,${independentSignature(secret, id, TS, body)} ${good}` }), body, { now: NOW }).status)
      .toBe('COMPLETED');
  });

  it('numeric amounts, normalised to decimal strings', () => {
    const raw = '{"status":"COMPLETED","actualWithdrawAmount":0.00000001,"expectedDisplayAmount":12.5,"withdrawFee":0.1,"displayFee":"0.92","transactionId":"t"}';
    const parsed = verifyCallback(secret, headersFor({}, TS, raw), raw, { now: NOW });
    expect(parsed.actualWithdrawAmount).toBe('0.00000001');
    expect(parsed.expectedDisplayAmount).toBe('12.5');
    expect(parsed.withdrawFee).toBe('0.1');
    expect(parsed.displayFee).toBe('0.92');
    expect(parsed.transactionId).toBe('t');
  });

  it('numeric amounts are taken as written, not through a double: exponents, 20 digits, a trailing zero', () => {
    const raw =
      '{"status":"COMPLETED","actualWithdrawAmount":1e21,"withdrawFee":1.5e-25,"deductedSettlementAmount":0.12345678901234567891,' +
      '"expectedDisplayAmount" : 2.50,"displayFee":-0,"note":"withdrawFee: 9"}';
    const parsed = verifyCallback(secret, headersFor({}, TS, raw), raw, { now: NOW });
    // JSON.parse alone would give "1e+21", "0" (toFixed(20) of 1.5e-25), 0.12345678901234568 and "2.5"
    expect(parsed.actualWithdrawAmount).toBe('1000000000000000000000');
    expect(parsed.withdrawFee).toBe('0.00000000000000000000000015');
    expect(parsed.deductedSettlementAmount).toBe('0.12345678901234567891');
    expect(parsed.expectedDisplayAmount).toBe('2.50');
    expect(parsed.displayFee).toBe('-0');
    expect(parsed.note).toBe('withdrawFee: 9');
  });

  it('a timestamp exactly at the 5-minute tolerance, either side', () => {
    for (const ts of [TS - 300, TS + 300]) {
      expect(verifyCallback(secret, headersFor({}, ts), body, { now: NOW }).status).toBe('COMPLETED');
    }
  });
});

describe('verifyCallback refuses', () => {
  it('a missing webhook-id', () => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-id': undefined }), body, { now: NOW }));
  });
  it('a missing webhook-timestamp', () => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-timestamp': undefined }), body, { now: NOW }));
  });
  it('a missing webhook-signature', () => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-signature': undefined }), body, { now: NOW }));
  });
  it.each(['12a', '-5', '1.5', '', ' 1', '1e9', '9999999999999'])('a malformed timestamp %j', (ts) => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-timestamp': ts }), body, { now: NOW }));
  });
  it('a timestamp more than 5 minutes old (correctly signed)', () => {
    const e = refusal(() => verifyCallback(secret, headersFor({}, TS - 301), body, { now: NOW }));
    expect(e.message).toMatch(/tolerance|timestamp/);
  });
  it('a timestamp more than 5 minutes in the future (correctly signed)', () => {
    const e = refusal(() => verifyCallback(secret, headersFor({}, TS + 301), body, { now: NOW }));
    expect(e.message).toMatch(/tolerance|timestamp/);
  });
  it('a signature made with another secret', () => {
    refusal(() => verifyCallback(otherSecret, headersFor(), body, { now: NOW }));
  });
  it('a tampered body', () => {
    const tampered = body.replace('0.5', '5.0');
    expect(tampered).not.toBe(body);
    refusal(() => verifyCallback(secret, headersFor(), tampered, { now: NOW }));
  });
  it('a signature under another webhook-id or timestamp than signed', () => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-id': `${id}x` }), body, { now: NOW }));
    const sig = headersFor()['webhook-signature']!;
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-timestamp': String(TS + 1), 'webhook-signature': sig }), body, { now: NOW }));
  });
  it('a correct MAC under the wrong version prefix (v2,)', () => {
    refusal(() => verifyCallback(secret, headersFor({ 'webhook-signature': `v2,${independentSignature(secret, id, TS, body)}` }), body, { now: NOW }));
  });
  it('a correctly signed body that is not JSON', () => {
    const raw = 'status=COMPLETED';
    const e = refusal(() => verifyCallback(secret, headersFor({}, TS, raw), raw, { now: NOW }));
    expect(e.message).toMatch(/JSON/);
  });
  it('a correctly signed JSON body that is not an object', () => {
    const raw = '[1,2]';
    refusal(() => verifyCallback(secret, headersFor({}, TS, raw), raw, { now: NOW }));
  });
});

describe('nextAttemptAt: a fixed schedule counted from the first attempt', () => {
  const first = new Date('2026-03-01T10:00:00.000Z');
  const at = (s: number) => new Date(first.getTime() + s * 1000);

  it('plans attempt n+1 at first + n × interval', () => {
    expect(nextAttemptAt(first, 1, at(0.3), 120, 86400)).toEqual(at(120));
    expect(nextAttemptAt(first, 2, at(120.4), 120, 86400)).toEqual(at(240));
    expect(nextAttemptAt(first, 5, at(480.9), 120, 86400)).toEqual(at(600));
  });

  it('does not drift when attempts themselves take time', () => {
    // attempt 2 started at 121 s and took 9 s: the third is still at 240 s, not 130 + 120
    expect(nextAttemptAt(first, 2, at(130), 120, 86400)).toEqual(at(240));
  });

  it('skips slots already past instead of bursting', () => {
    // a worker that was down until 500 s: the next attempt is the next slot, 600 s
    expect(nextAttemptAt(first, 1, at(500), 120, 86400)).toEqual(at(600));
    expect(nextAttemptAt(first, 2, at(1000), 120, 86400)).toEqual(at(1080));
  });

  it('allows an attempt exactly at the end of the window, none after it', () => {
    // 24 h / 2 min = 720 intervals: attempt 721 is at exactly 86400 s
    expect(nextAttemptAt(first, 720, at(86280.5), 120, 86400)).toEqual(at(86400));
    expect(nextAttemptAt(first, 721, at(86400.5), 120, 86400)).toBeNull();
    expect(nextAttemptAt(first, 1, at(86401), 120, 86400)).toBeNull();
  });

  it('with a 1 s interval and a 3 s window: 1, 2, 3, then null', () => {
    expect(nextAttemptAt(first, 1, at(0.01), 1, 3)).toEqual(at(1));
    expect(nextAttemptAt(first, 2, at(1.01), 1, 3)).toEqual(at(2));
    expect(nextAttemptAt(first, 3, at(2.01), 1, 3)).toEqual(at(3));
    expect(nextAttemptAt(first, 4, at(3.01), 1, 3)).toBeNull();
  });
});

describe('signing.ts, as merchants copy it', () => {
  it('imports nothing but node:crypto (the README says to copy it freely)', () => {
    const source = readFileSync(new URL('../../../server/modules/callbacks/signing.ts', import.meta.url), 'utf8');
    expect([...source.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1])).toEqual(['node:crypto']);
  });
});
