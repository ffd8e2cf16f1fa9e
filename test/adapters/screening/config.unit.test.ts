/** The §11 screening variables: defaults and refusals that name the variable. */
import { describe, expect, it } from 'vitest';
import { screeningConfigFromEnv } from '../../../server/adapters/screening/config.js';

describe('screening configuration', () => {
  it('defaults to ofac alone, no refresh URL', () => {
    expect(screeningConfigFromEnv({})).toEqual({ sources: ['ofac'], ofacSdnUrl: null, chainalysis: null });
  });

  it('chainalysis needs its key; base URL and SDN URL overridable', () => {
    expect(
      screeningConfigFromEnv({
        KASSA_SANCTIONS_SOURCES: 'ofac,chainalysis',
        KASSA_CHAINALYSIS_API_KEY: 'k123',
        KASSA_CHAINALYSIS_URL: 'http://127.0.0.1:9100/',
        KASSA_OFAC_SDN_URL: 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_ADVANCED.XML',
      }),
    ).toEqual({
      sources: ['ofac', 'chainalysis'],
      ofacSdnUrl: 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_ADVANCED.XML',
      chainalysis: { apiKey: 'k123', baseUrl: 'http://127.0.0.1:9100' },
    });
    expect(screeningConfigFromEnv({ KASSA_SANCTIONS_SOURCES: 'chainalysis', KASSA_CHAINALYSIS_API_KEY: 'k' }).chainalysis?.baseUrl).toBe(
      'https://public.chainalysis.com',
    );
  });

  it('refuses bad values, naming the variable', () => {
    expect(() => screeningConfigFromEnv({ KASSA_SANCTIONS_SOURCES: 'chainalysis' })).toThrow(/^KASSA_CHAINALYSIS_API_KEY: required/);
    expect(() => screeningConfigFromEnv({ KASSA_SANCTIONS_SOURCES: 'ofac,elliptic' })).toThrow(/^KASSA_SANCTIONS_SOURCES: unknown source "elliptic"/);
    expect(() => screeningConfigFromEnv({ KASSA_SANCTIONS_SOURCES: ' , ' })).toThrow(/^KASSA_SANCTIONS_SOURCES: names no source/);
    expect(() => screeningConfigFromEnv({ KASSA_OFAC_SDN_URL: 'file:///tmp/x.xml' })).toThrow(/^KASSA_OFAC_SDN_URL: /);
  });
});
