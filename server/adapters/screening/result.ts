/**
 * What a screening source answers: the app's risk assessment (spec field names), or a typed
 * "cannot answer" that the app turns into COMPLIANCE_REVIEW, never into a pass.
 */

import type { RiskAssessment } from '../../modules/compliance/index.js';

export type { LegalEntity, RiskAssessment } from '../../modules/compliance/index.js';

export interface SanctionsScreener {
  readonly name: string;
  /** Screen one address of one Kassa network; throws ScreeningUnavailable when it cannot answer. */
  screen(network: string, address: string): Promise<RiskAssessment>;
}

export const SANCTIONS_CATEGORY = 'sanctions';

/** A sanctions hit: the highest score, the listed owner. */
export const sanctionedAssessment = (name: string): RiskAssessment => ({
  riskScore: '10.0',
  addressOwner: { name, category: SANCTIONS_CATEGORY },
  sourceRiskEntities: [],
  destinationRiskEntities: [],
});

/**
 * Not on the list. A sanctions list knows nothing else about an address, so the owner is
 * unknown and the score is 0.0: screening found no sanction, it did not find a clean owner.
 */
export const NOT_LISTED: RiskAssessment = Object.freeze({
  riskScore: '0.0',
  addressOwner: Object.freeze({ name: 'Unknown', category: 'unknown' }),
  sourceRiskEntities: [],
  destinationRiskEntities: [],
}) as RiskAssessment;

export type UnavailableKind = 'list_missing' | 'rate_limited' | 'http' | 'timeout' | 'network' | 'malformed' | 'unsupported_network';

/** The source cannot answer now: the deposit waits in COMPLIANCE_REVIEW, a withdrawal is not sent. */
export class ScreeningUnavailable extends Error {
  constructor(
    readonly source: string,
    readonly kind: UnavailableKind,
    message: string,
    readonly retryAfterS: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${message}`, options);
    this.name = 'ScreeningUnavailable';
  }
}

/** `ofac` is configured but no SDN list has been imported yet (`/ready` shows sanctions: "missing"). */
export class SanctionsListMissing extends ScreeningUnavailable {
  constructor(source: string) {
    super(source, 'list_missing', 'no sanctions list imported yet');
    this.name = 'SanctionsListMissing';
  }
}
