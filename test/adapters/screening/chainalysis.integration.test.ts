/**
 * The Chainalysis sanctions API client against a local double answering in its documented
 * format (`{"identifications":[{category,name,description,url}]}`): the exact call and key
 * header, hit and no hit, and every failure as ScreeningUnavailable (never a pass).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainalysisScreening } from '../../../server/adapters/screening/chainalysis.js';
import { NOT_LISTED, ScreeningUnavailable, sanctionedAssessment } from '../../../server/adapters/screening/result.js';
import { SanctionsScreening } from '../../../server/adapters/screening/sanctions-screening.js';
import { startHttpDouble, type HttpDouble } from '../rates/http-double.js';

const LISTED = '0x79b36A05A29a73c1da1Ae7723672Dd89738a4742';
const IDENTIFICATION = {
  category: 'sanctions',
  name: 'SANCTIONS: OFAC SDN Northwind OTC, s.r.o. 2026-11-20 79b36A05A29a73c1da1Ae7723672Dd89738a4742',
  description:
    'Pursuant to Executive Order (E.O.) 13694, as amended, OFAC designated Northwind OTC, s.r.o. for its part in laundering proceeds of ransomware attacks.',
  url: 'https://home.treasury.gov/policy-issues/financial-sanctions/recent-actions/20261120',
};

let double: HttpDouble;
beforeAll(async () => {
  double = await startHttpDouble();
});
afterAll(async () => {
  await double.close();
});

const client = (timeoutMs = 5000) => new ChainalysisScreening({ apiKey: 'test-key-123', baseUrl: `${double.url}/`, timeoutMs });
const unavailable = async (p: Promise<unknown>) => {
  const e = await p.catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ScreeningUnavailable);
  return e as ScreeningUnavailable;
};

describe('Chainalysis GET /api/v1/address/<address>', () => {
  it('a non-empty identifications array is a hit: 10.0, category sanctions, the identification name', async () => {
    double.requests.splice(0);
    double.answer((req) => ({ body: { identifications: req.url.endsWith(LISTED) ? [IDENTIFICATION] : [] } }));
    expect(await client().screen('ETH', LISTED)).toEqual(sanctionedAssessment(IDENTIFICATION.name));
    expect(double.requests[0]!.url).toBe(`/api/v1/address/${LISTED}`);
    expect(double.requests[0]!.headers['x-api-key']).toBe('test-key-123');
  });

  it('an empty array is not listed', async () => {
    expect(await client().screen('BTC', 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh')).toEqual(NOT_LISTED);
  });

  it('429 → rate_limited with Retry-After', async () => {
    double.answer(() => ({ status: 429, headers: { 'retry-after': '30' }, body: { message: 'Too Many Requests' } }));
    const e = await unavailable(client().screen('ETH', LISTED));
    expect(e.kind).toBe('rate_limited');
    expect(e.retryAfterS).toBe(30);
  });

  it('a wrong key (403) or a server error (500) → http', async () => {
    double.answer(() => ({ status: 403, body: { message: 'Forbidden' } }));
    expect((await unavailable(client().screen('ETH', LISTED))).message).toMatch(/HTTP 403/);
    double.answer(() => ({ status: 500, body: '<html>Internal Server Error</html>' }));
    expect((await unavailable(client().screen('ETH', LISTED))).kind).toBe('http');
  });

  it('malformed bodies → malformed', async () => {
    for (const body of ['not json', { identifications: 'none' }, { results: [] }, '[]']) {
      double.answer(() => ({ body }));
      expect((await unavailable(client().screen('ETH', LISTED))).kind).toBe('malformed');
    }
  });

  it('no answer in time → timeout; nobody listening → network', async () => {
    double.answer(() => ({ delayMs: 2000, body: { identifications: [] } }));
    expect((await unavailable(client(100).screen('ETH', LISTED))).kind).toBe('timeout');
    const gone = await startHttpDouble();
    await gone.close();
    const e = await unavailable(new ChainalysisScreening({ apiKey: 'k', baseUrl: gone.url }).screen('ETH', LISTED));
    expect(e.kind).toBe('network');
  });

  it('behind the combined port, Chainalysis down means review unless another source has a hit', async () => {
    double.answer(() => ({ status: 503, body: 'down' }));
    const listedElsewhere = { name: 'ofac', screen: async () => sanctionedAssessment('NORTHWIND OTC, S.R.O.') };
    const clearElsewhere = { name: 'ofac', screen: async () => NOT_LISTED };
    expect((await new SanctionsScreening([listedElsewhere, client()]).screen('ETH', LISTED)).riskScore).toBe('10.0');
    await unavailable(new SanctionsScreening([clearElsewhere, client()]).screen('ETH', LISTED));
    // An untyped failure of a source (a database error) is also "cannot answer".
    const broken = { name: 'ofac', screen: async () => Promise.reject(new Error('connection refused')) };
    double.answer(() => ({ body: { identifications: [] } }));
    expect((await unavailable(new SanctionsScreening([broken, client()]).screen('ETH', LISTED))).source).toBe('ofac');
  });
});
