/**
 * The free Chainalysis sanctions API: `GET {base}/api/v1/address/<address>` with header
 * `X-API-Key`. It answers `{"identifications":[{"category":"sanctions","name":…,
 * "description":…,"url":…}]}`; a non-empty array is a hit, an empty one is not listed. Any
 * failure (HTTP error, 429, timeout, a body without the array) is ScreeningUnavailable: the app
 * then holds the deposit for review, it never lets it through unscreened.
 */
import { NOT_LISTED, ScreeningUnavailable, sanctionedAssessment, type RiskAssessment, type SanctionsScreener } from './result.js';

export const CHAINALYSIS_DEFAULT_URL = 'https://public.chainalysis.com';

export type ChainalysisOptions = {
  /** KASSA_CHAINALYSIS_API_KEY */
  apiKey: string;
  /** KASSA_CHAINALYSIS_URL; default https://public.chainalysis.com */
  baseUrl?: string;
  /** Default 10 000 ms. */
  timeoutMs?: number;
};

const retryAfter = (value: string | null): number | null => {
  if (value === null) return null;
  if (/^\s*[0-9]+\s*$/.test(value)) return Number(value);
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - Date.now()) / 1000));
};

export class ChainalysisScreening implements SanctionsScreener {
  readonly name = 'chainalysis';
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: ChainalysisOptions) {
    this.baseUrl = (options.baseUrl ?? CHAINALYSIS_DEFAULT_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The API is chain-agnostic: the network is not sent. */
  async screen(_network: string, address: string): Promise<RiskAssessment> {
    const url = `${this.baseUrl}/api/v1/address/${encodeURIComponent(address.trim())}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let text: string;
    let headers: Headers;
    try {
      const response = await fetch(url, {
        headers: { 'X-API-Key': this.options.apiKey, accept: 'application/json' },
        signal: timeout,
        redirect: 'error',
      });
      status = response.status;
      headers = response.headers;
      text = await response.text();
    } catch (error) {
      if (timeout.aborted) throw new ScreeningUnavailable(this.name, 'timeout', `no answer within ${this.timeoutMs} ms`);
      throw new ScreeningUnavailable(this.name, 'network', `request failed: ${error instanceof Error ? error.message : String(error)}`, null, {
        cause: error,
      });
    }
    if (status === 429) {
      const after = retryAfter(headers.get('retry-after'));
      throw new ScreeningUnavailable(this.name, 'rate_limited', 'rate limited (429)', after);
    }
    if (status < 200 || status > 299) throw new ScreeningUnavailable(this.name, 'http', `HTTP ${status}: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ScreeningUnavailable(this.name, 'malformed', `not JSON (${text.slice(0, 80)})`);
    }
    const identifications = typeof body === 'object' && body !== null ? (body as { identifications?: unknown }).identifications : undefined;
    if (!Array.isArray(identifications)) throw new ScreeningUnavailable(this.name, 'malformed', 'no identifications array');
    if (identifications.length === 0) return NOT_LISTED;
    const names = identifications
      .map((i) => (typeof i === 'object' && i !== null && typeof (i as { name?: unknown }).name === 'string' ? (i as { name: string }).name : null))
      .filter((n): n is string => !!n);
    return sanctionedAssessment(names.length ? [...new Set(names)].join('; ') : 'Sanctioned address (Chainalysis)');
  }
}
