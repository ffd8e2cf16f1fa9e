/**
 * The §11 screening variables, validated, and the ScreeningPort built from them.
 *
 *   KASSA_SANCTIONS_SOURCES    ofac,chainalysis (default: ofac)
 *   KASSA_OFAC_SDN_URL         when set, the SDN advanced XML is re-imported from it daily
 *   KASSA_CHAINALYSIS_API_KEY  required when chainalysis is a source
 *   KASSA_CHAINALYSIS_URL      default https://public.chainalysis.com
 */
import type postgres from 'postgres';
import { z } from 'zod';
import { CHAINALYSIS_DEFAULT_URL, ChainalysisScreening } from './chainalysis.js';
import { OfacScreening } from './ofac.js';
import type { SanctionsScreener } from './result.js';
import { SanctionsScreening } from './sanctions-screening.js';

export const SANCTIONS_SOURCE_NAMES = ['ofac', 'chainalysis'] as const;
export type SanctionsSourceName = (typeof SANCTIONS_SOURCE_NAMES)[number];

export type ScreeningConfig = {
  sources: SanctionsSourceName[];
  ofacSdnUrl: string | null;
  chainalysis: { apiKey: string; baseUrl: string } | null;
};

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export function screeningConfigFromEnv(env: Record<string, string | undefined>): ScreeningConfig {
  const fail = (variable: string, message: string): never => {
    throw new Error(`${variable}: ${message}`);
  };
  const url = (variable: string): string | null => {
    const raw = env[variable];
    if (!raw) return null;
    const r = httpUrl.safeParse(raw);
    return r.success ? r.data : fail(variable, r.error.issues[0]?.message ?? 'invalid');
  };
  const names = (env.KASSA_SANCTIONS_SOURCES ?? 'ofac')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) fail('KASSA_SANCTIONS_SOURCES', 'names no source');
  for (const n of names) {
    if (!(SANCTIONS_SOURCE_NAMES as readonly string[]).includes(n)) {
      fail('KASSA_SANCTIONS_SOURCES', `unknown source "${n}" (known: ${SANCTIONS_SOURCE_NAMES.join(', ')})`);
    }
  }
  const sources = [...new Set(names)] as SanctionsSourceName[];
  let chainalysis: ScreeningConfig['chainalysis'] = null;
  if (sources.includes('chainalysis')) {
    const apiKey = env.KASSA_CHAINALYSIS_API_KEY?.trim();
    if (!apiKey) fail('KASSA_CHAINALYSIS_API_KEY', 'required when KASSA_SANCTIONS_SOURCES includes chainalysis');
    chainalysis = { apiKey: apiKey!, baseUrl: (url('KASSA_CHAINALYSIS_URL') ?? CHAINALYSIS_DEFAULT_URL).replace(/\/+$/, '') };
  }
  return { sources, ofacSdnUrl: url('KASSA_OFAC_SDN_URL'), chainalysis };
}

/** The port (`screen`) and, when configured, the OFAC list (for `/ready` and the import CLI). */
export function createSanctionsScreening(sql: postgres.Sql, config: ScreeningConfig): { screening: SanctionsScreening; ofac: OfacScreening | null } {
  const ofac = config.sources.includes('ofac') ? new OfacScreening(sql) : null;
  const screeners: SanctionsScreener[] = config.sources.map((name) =>
    name === 'ofac' ? ofac! : new ChainalysisScreening({ apiKey: config.chainalysis!.apiKey, baseUrl: config.chainalysis!.baseUrl }),
  );
  return { screening: new SanctionsScreening(screeners), ofac };
}
