/**
 * The merchant request signature of CONTRACT §2, checked against an
 * independent HMAC computation with node:crypto.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authorizationHeader, diagnoseAuthorization, parseAuthorization, sign, signaturePayload, signedStringShape,
} from '../../../server/edges/rest/signature.rules.js';

/** CONTRACT §2 written out independently of the code under test. */
function expected(secret: string, timestamp: string, method: string, path: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}\n${method}\n${path}\n${body}`, 'utf8').digest('hex');
}

const SIG = 'a'.repeat(64);

describe('sign', () => {
  it('is the lowercase hex HMAC-SHA256 of "<ts>\\n<METHOD>\\n<path>\\n<body>"', () => {
    const cases: [string, string, string, string, string][] = [
      ['ks_secret', '1700000000', 'POST', '/v1/payments', '{"clientPaymentId":"o-1"}'],
      ['ks_secret', '1700000000', 'GET', '/v1/payments/6f1c2d3e-0000-4000-8000-000000000001', ''],
      ['ks_other', '1800000123', 'GET', '/v1/payments?clientPaymentId=o-1&limit=2', ''],
      ['ks_secret', '1700000000', 'DELETE', '/v1/whitelisted-addresses', '{"network":"BTC"}'],
      ['ks_ünïcødé', '1700000000', 'POST', '/v1/payments', '{"note":"Grüße, 東京"}'],
    ];
    for (const [secret, ts, method, path, body] of cases) {
      expect(sign(secret, ts, method, path, body), `${method} ${path}`).toBe(expected(secret, ts, method, path, body));
    }
  });

  it('worked example: secret ks_test, timestamp 1700000000, POST /v1/payments, body {"a":1}', () => {
    // HMAC-SHA256(key "ks_test", "1700000000\nPOST\n/v1/payments\n{\"a\":1}"), lowercase hex
    const want = createHmac('sha256', 'ks_test').update('1700000000\nPOST\n/v1/payments\n{"a":1}').digest('hex');
    const got = sign('ks_test', '1700000000', 'POST', '/v1/payments', '{"a":1}');
    expect(got).toMatch(/^[0-9a-f]{64}$/);
    expect(got).toBe(want);
    expect(signaturePayload('1700000000', 'POST', '/v1/payments', '{"a":1}')).toBe('1700000000\nPOST\n/v1/payments\n{"a":1}');
    expect(authorizationHeader('kk_demo', 'ks_test', { method: 'POST', path: '/v1/payments', body: '{"a":1}', timestamp: 1700000000 }))
      .toBe(`KASSA-API api-key=kk_demo,signature=${want},timestamp=1700000000`);
  });

  it('signs the method upper-cased', () => {
    expect(sign('s', '1', 'post', '/v1/payments', '')).toBe(expected('s', '1', 'POST', '/v1/payments', ''));
  });

  it('changes with every signed part', () => {
    const base = sign('s', '1700000000', 'POST', '/v1/payments', '{"a":1}');
    expect(sign('t', '1700000000', 'POST', '/v1/payments', '{"a":1}')).not.toBe(base);
    expect(sign('s', '1700000001', 'POST', '/v1/payments', '{"a":1}')).not.toBe(base);
    expect(sign('s', '1700000000', 'GET', '/v1/payments', '{"a":1}')).not.toBe(base);
    expect(sign('s', '1700000000', 'POST', '/v1/payments?x=1', '{"a":1}')).not.toBe(base);
    expect(sign('s', '1700000000', 'POST', '/v1/payments', '{"a":2}')).not.toBe(base);
    expect(sign('s', '1700000000', 'POST', '/v1/payments', '{"a":1} ')).not.toBe(base);
  });

  it('empty body signs the empty string (the payload ends with the newline after the path)', () => {
    const want = createHmac('sha256', 'k').update('1700000000\nGET\n/v1/currencies\n').digest('hex');
    expect(sign('k', '1700000000', 'GET', '/v1/currencies', '')).toBe(want);
  });
});

describe('authorizationHeader / parseAuthorization', () => {
  it('round-trips', () => {
    const header = authorizationHeader('kk_AbC-12_x', 'ks_secret', { method: 'GET', path: '/v1/payments', timestamp: 1700000123 });
    expect(parseAuthorization(header)).toEqual({
      apiKey: 'kk_AbC-12_x',
      signature: expected('ks_secret', '1700000123', 'GET', '/v1/payments', ''),
      timestamp: 1700000123,
    });
  });

  it('uses the current time when no timestamp is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const parsed = parseAuthorization(authorizationHeader('kk_a', 's', { method: 'GET', path: '/' }));
    const after = Math.floor(Date.now() / 1000);
    expect(parsed).not.toBeNull();
    expect(parsed!.timestamp).toBeGreaterThanOrEqual(before);
    expect(parsed!.timestamp).toBeLessThanOrEqual(after);
  });

  it('accepts exactly the documented form', () => {
    expect(parseAuthorization(`KASSA-API api-key=kk_abc,signature=${SIG},timestamp=1700000000`)).toEqual({
      apiKey: 'kk_abc', signature: SIG, timestamp: 1700000000,
    });
  });

  it.each([
    ['no header', undefined],
    ['empty', ''],
    ['space after a comma', `KASSA-API api-key=kk_abc, signature=${SIG},timestamp=1700000000`],
    ['spaces around =', `KASSA-API api-key = kk_abc,signature=${SIG},timestamp=1700000000`],
    ['two spaces after the scheme', `KASSA-API  api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['space inside the signature', `KASSA-API api-key=kk_abc,signature=${SIG.slice(0, 32)} ${SIG.slice(32)},timestamp=1700000000`],
    ['uppercase hex', `KASSA-API api-key=kk_abc,signature=${'A'.repeat(64)},timestamp=1700000000`],
    ['mixed-case hex', `KASSA-API api-key=kk_abc,signature=${'aB'.repeat(32)},timestamp=1700000000`],
    ['short signature', `KASSA-API api-key=kk_abc,signature=${SIG.slice(1)},timestamp=1700000000`],
    ['long signature', `KASSA-API api-key=kk_abc,signature=${SIG}0,timestamp=1700000000`],
    ['non-hex signature', `KASSA-API api-key=kk_abc,signature=${'g'.repeat(64)},timestamp=1700000000`],
    ['missing api-key', `KASSA-API signature=${SIG},timestamp=1700000000`],
    ['empty api-key', `KASSA-API api-key=,signature=${SIG},timestamp=1700000000`],
    ['missing signature', 'KASSA-API api-key=kk_abc,timestamp=1700000000'],
    ['missing timestamp', `KASSA-API api-key=kk_abc,signature=${SIG}`],
    ['empty timestamp', `KASSA-API api-key=kk_abc,signature=${SIG},timestamp=`],
    ['non-numeric timestamp', `KASSA-API api-key=kk_abc,signature=${SIG},timestamp=17e8`],
    ['negative timestamp', `KASSA-API api-key=kk_abc,signature=${SIG},timestamp=-1700000000`],
    ['a timestamp with a leading zero', `KASSA-API api-key=kk_abc,signature=${SIG},timestamp=01700000000`],
    ['missing scheme', `api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['Bearer scheme', `Bearer api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['other scheme', `HMAC api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['other service', `ACME-API api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['extra parameter at the end', `KASSA-API api-key=kk_abc,signature=${SIG},timestamp=1700000000,nonce=1`],
    ['extra parameter in front', `KASSA-API nonce=1,api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['reordered parameters', `KASSA-API timestamp=1700000000,api-key=kk_abc,signature=${SIG}`],
    ['duplicated parameter', `KASSA-API api-key=kk_abc,api-key=kk_abc,signature=${SIG},timestamp=1700000000`],
    ['quoted values', `KASSA-API api-key="kk_abc",signature="${SIG}",timestamp="1700000000"`],
    ['semicolons', `KASSA-API api-key=kk_abc;signature=${SIG};timestamp=1700000000`],
    ['illegal key characters', `KASSA-API api-key=kk/abc,signature=${SIG},timestamp=1700000000`],
  ])('rejects %s', (_label, header) => {
    expect(parseAuthorization(header)).toBeNull();
  });
});

describe('diagnoseAuthorization and signedStringShape (what a refusal says)', () => {
  const key = 'kk_test';
  const hex = 'a'.repeat(64);
  it.each([
    [undefined, 'missing'],
    ['Bearer abc', 'must start with "KASSA-API "'],
    [`KASSA-API signature=${hex},timestamp=1700000000`, 'no api-key='],
    [`KASSA-API api-key=${key},timestamp=1700000000`, 'no signature='],
    [`KASSA-API api-key=${key},signature=${hex},timestamp=1700000000123`, 'looks like milliseconds; send UNIX seconds (1700000000)'],
    [`KASSA-API api-key=${key},signature=${hex},timestamp=2026-01-01T00:00:00Z`, 'UNIX seconds as digits only'],
    // The server verifies the number as it writes it: "01700000000" would be signed over other text.
    [`KASSA-API api-key=${key},signature=${hex},timestamp=01700000000`, 'without leading zeros (e.g. 1700000000), not "01700000000"'],
    [`KASSA-API api-key=${key},signature=${'A'.repeat(64)},timestamp=1700000000`, '64 lowercase hex'],
    [`KASSA-API api-key=${key}, signature=${hex},timestamp=1700000000`, 'must be exactly'],
  ])('%j → %s', (header, expected) => {
    expect(parseAuthorization(header)).toBeNull();
    expect(diagnoseAuthorization(header)).toContain(expected);
  });

  it('shows the verified string with the body as its length only', () => {
    expect(signedStringShape('1700000000', 'post', '/v1/payments?x=1', '{"a":"é"}')).toBe(
      JSON.stringify('1700000000\nPOST\n/v1/payments?x=1\n<the raw body, 10 bytes, exactly as sent>'),
    );
    expect(signedStringShape('1700000000', 'GET', '/v1/balances', '')).toBe(JSON.stringify('1700000000\nGET\n/v1/balances\n'));
  });
});
