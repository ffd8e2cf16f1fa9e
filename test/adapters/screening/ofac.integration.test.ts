/**
 * The SDN advanced XML importer and the OFAC matcher against real PostgreSQL: counts per
 * network, feature types read from the file, streaming from a file and from an http URL,
 * idempotent and atomic re-import, "no list yet" as its own answer, EVM case-insensitive.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfacScreening } from '../../../server/adapters/screening/ofac.js';
import { importSdn, parseSdnAdvanced, SdnFormatError } from '../../../server/adapters/screening/ofac-import.js';
import { NOT_LISTED, SanctionsListMissing } from '../../../server/adapters/screening/result.js';
import { SanctionsScreening } from '../../../server/adapters/screening/sanctions-screening.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { startHttpDouble } from '../rates/http-double.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/sdn_advanced.sample.xml', import.meta.url));
const XML = readFileSync(FIXTURE, 'utf8');

const EXPECTED_COUNTS = { BTC: 3, ETH: 4, TRX: 2, LTC: 1, BSC: 1, BCH: 1, XRP: 1, SOL: 1 };
const NORTHWIND = 'NORTHWIND OTC, S.R.O.';
const PETROV = 'PETROV, Ivan Sergeyevich';
const AURORA = 'AURORA MIXER LIMITED & CO';

let db: TestDatabase;
let dir: string;
let ofac: OfacScreening;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'kassa-sdn-'));
  ofac = new OfacScreening(db.sql);
});
afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const allRows = () =>
  db.sql`select network, address, listed_address, sdn_currency, party_name, party_ref from sanctioned_addresses order by 1, 2, 6, 4`;

describe('before any import', () => {
  it('screening answers SanctionsListMissing, distinct from "not listed", and status says not imported', async () => {
    await expect(ofac.screen('ETH', '0x79b36A05A29a73c1da1Ae7723672Dd89738a4742')).rejects.toBeInstanceOf(SanctionsListMissing);
    expect(await ofac.status()).toEqual({ imported: false });
  });
});

describe('import', () => {
  it('stores the digital-currency addresses with their party, counted per network', async () => {
    const counts = await importSdn(db.sql, FIXTURE, { now: () => new Date('2026-11-23T06:00:00Z') });
    expect(counts).toEqual({
      source: FIXTURE,
      published: '2026-11-20',
      parties: 4,
      addresses: 14,
      perNetwork: EXPECTED_COUNTS,
      skipped: { XMR: 1 },
    });
    const rows = await allRows();
    expect(rows).toHaveLength(14);
    expect(rows.find((r) => r.listed_address === '0x3792a50DA2bd507EBfA34f2cAE276D514568F3D6')).toEqual({
      network: 'ETH',
      address: '0x3792a50da2bd507ebfa34f2cae276d514568f3d6',
      listed_address: '0x3792a50DA2bd507EBfA34f2cAE276D514568F3D6',
      sdn_currency: 'ETH',
      party_name: PETROV, // parts of the first (Latin) DocumentedName only
      party_ref: '90002',
    });
    // the Website and Email features are not addresses; the duplicate BSC feature is one row
    expect(rows.some((r) => String(r.listed_address).includes('example'))).toBe(false);
    expect(rows.filter((r) => r.network === 'BSC')).toHaveLength(1);
    expect(await ofac.status()).toEqual({
      imported: true,
      importedAt: '2026-11-23T06:00:00.000Z',
      source: FIXTURE,
      published: '2026-11-20',
      addresses: 14,
      perNetwork: EXPECTED_COUNTS,
    });
  });

  it('re-importing the same file gives the same rows (idempotent)', async () => {
    const before = await allRows();
    const again = await importSdn(db.sql, FIXTURE);
    expect(again.perNetwork).toEqual(EXPECTED_COUNTS);
    expect(await allRows()).toEqual(before);
  });

  it('feature type IDs come from the file: swapped and renumbered IDs give the same result', async () => {
    // XBT and ETH exchange IDs, and every other digital-currency ID moves by 10000.
    const remapped = XML.replace(/(<FeatureType ID=|FeatureTypeID=)"(\d+)"/g, (m, p: string, id: string) => {
      const n = Number(id);
      const to = n === 344 ? 345 : n === 345 ? 344 : n >= 400 ? n + 10000 : n;
      return `${p}"${to}"`;
    });
    expect(remapped).toContain('<FeatureType ID="345" FeatureTypeGroupID="1">Digital Currency Address - XBT');
    expect(remapped).toContain('FeatureTypeID="10887"');
    const parsed = await parseSdnAdvanced([remapped]);
    expect(parsed.featureTypes.get('345')).toBe('XBT');
    expect(parsed.featureTypes.get('10887')).toBe('USDT');
    const counts = await importSdn(db.sql, write('remapped.xml', remapped));
    expect(counts.perNetwork).toEqual(EXPECTED_COUNTS);
  });

  it('streams from an http(s) URL; the parser takes any chunking', async () => {
    const bytes = Buffer.from(XML, 'utf8');
    const double = await startHttpDouble(() => ({ status: 200, headers: { 'content-type': 'application/xml' }, body: XML }));
    try {
      const counts = await importSdn(db.sql, `${double.url}/sdn_advanced.xml`);
      expect(counts.perNetwork).toEqual(EXPECTED_COUNTS);
      expect(double.requests.map((r) => r.url)).toEqual(['/sdn_advanced.xml']);
    } finally {
      await double.close();
    }
    // The parser itself takes any chunking, even one split inside a multi-byte character (Cyrillic).
    const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
    const parsed = await parseSdnAdvanced((async function* () { yield* chunks; })());
    expect(parsed.addresses).toHaveLength(16); // before de-duplication and skipping
  });

  it('a bad file changes nothing: truncated, not the SDN schema, or an HTTP error', async () => {
    const before = await allRows();
    const truncated = write('truncated.xml', XML.slice(0, Math.floor(XML.length * 0.6)));
    await expect(importSdn(db.sql, truncated)).rejects.toBeInstanceOf(SdnFormatError);
    const other = write('other.xml', '<?xml version="1.0"?><sdnList><sdnEntry><uid>1</uid></sdnEntry></sdnList>');
    await expect(importSdn(db.sql, other)).rejects.toThrow(/no "Digital Currency Address" FeatureType/);
    const double = await startHttpDouble(() => ({ status: 503, body: 'maintenance' }));
    try {
      await expect(importSdn(db.sql, `${double.url}/sdn_advanced.xml`)).rejects.toThrow(/HTTP 503/);
    } finally {
      await double.close();
    }
    expect(await allRows()).toEqual(before);
  });

  it('a new list replaces the old one whole: a delisted address no longer matches', async () => {
    const withoutPetrov = XML.replace(/<DistinctParty FixedRef="90002">[\s\S]*?<\/DistinctParty>/, '');
    const counts = await importSdn(db.sql, write('smaller.xml', withoutPetrov));
    expect(counts.perNetwork).toEqual({ ...EXPECTED_COUNTS, ETH: 2, LTC: undefined });
    expect(counts.skipped).toEqual({});
    expect(await ofac.screen('ETH', '0x3792a50DA2bd507EBfA34f2cAE276D514568F3D6')).toEqual(NOT_LISTED);
    await importSdn(db.sql, FIXTURE);
    expect((await ofac.screen('ETH', '0x3792a50DA2bd507EBfA34f2cAE276D514568F3D6')).addressOwner.name).toBe(PETROV);
  });
});

describe('matching', () => {
  it('EVM addresses match in any case, on ETH and BSC alike', async () => {
    for (const a of [
      '0x79b36A05A29a73c1da1Ae7723672Dd89738a4742',
      '0x79b36a05a29a73c1da1ae7723672dd89738a4742',
      '0x79B36A05A29A73C1DA1AE7723672DD89738A4742',
    ]) {
      for (const network of ['ETH', 'BSC']) {
        expect(await ofac.screen(network, a)).toEqual({
          riskScore: '10.0',
          // listed for two parties: both named
          addressOwner: { name: `${NORTHWIND}; ${PETROV}`, category: 'sanctions' },
          sourceRiskEntities: [],
          destinationRiskEntities: [],
        });
      }
    }
    expect((await ofac.screen('ETH', '0x2842a5941e1c2e56b5d6a27794b79a026dec2c71')).addressOwner).toEqual({ name: AURORA, category: 'sanctions' });
  });

  it('per network: a TRX address is not a hit on XRP; bech32 in any case; base58 case matters', async () => {
    expect((await ofac.screen('TRX', 'THyHT3Lm71cGwzn2kMzAD3vx6aBALi3ni6')).addressOwner.name).toBe(`${AURORA}; ${NORTHWIND}`);
    expect(await ofac.screen('XRP', 'THyHT3Lm71cGwzn2kMzAD3vx6aBALi3ni6')).toEqual(NOT_LISTED);
    expect((await ofac.screen('BTC', 'BC1QXY2KGDYGJRSQTZQ2N0YRF2493P83KKFJHX0WLH')).riskScore).toBe('10.0');
    expect((await ofac.screen('BTC', '3G1iJsxmNnMjNthfP8VfBQzAEtabLuhujB')).addressOwner.name).toBe(AURORA); // USDT on Omni
    expect(await ofac.screen('BTC', '1frky8h9nqjpnwznnigejseleNUK5XRMHN')).toEqual(NOT_LISTED);
    expect((await ofac.screen('LTC', 'ltc1qg82mf6zhsxqhkvdaxs8rl3vsu0rq3mfd5qkzhq')).riskScore).toBe('10.0');
    expect((await ofac.screen('SOL', 'vhXuxQaPc1hAwFX73X34iSQvExZFyYnHEYg6H1pWWqXw')).riskScore).toBe('10.0');
    expect((await ofac.screen('XRP', 'rn7AncB7F1a8hE77cSS5YqjpUJ7Fapw8fL')).riskScore).toBe('10.0');
  });

  it('BCH listed in legacy form matches a CashAddr sender', async () => {
    expect((await ofac.screen('BCH', 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a')).addressOwner.name).toBe(AURORA);
    expect((await ofac.screen('BCH', 'qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a')).riskScore).toBe('10.0');
  });

  it('an unlisted address is not listed (0.0); the combined port gives the same', async () => {
    expect(await ofac.screen('ETH', '0x0000000000000000000000000000000000000001')).toEqual(NOT_LISTED);
    const port = new SanctionsScreening([ofac]);
    expect((await port.screen('ETH', '0x3792A50DA2BD507EBFA34F2CAE276D514568F3D6'.replace('0X', '0x'))).addressOwner.category).toBe('sanctions');
    expect(await port.screen('ETH', '0x0000000000000000000000000000000000000001')).toEqual(NOT_LISTED);
  });
});
