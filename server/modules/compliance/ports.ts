/**
 * What compliance needs from outside: screening of an address (the sender of
 * a deposit, the receiver of a withdrawal). The composition root picks the
 * source: the sandbox's deterministic scores, or live lists and vendors.
 */
export type LegalEntity = { name: string; category: string };

export type RiskAssessment = {
  /** 0 (clean) to 10 (certainly illicit), one decimal. */
  riskScore: string;
  addressOwner: LegalEntity;
  sourceRiskEntities: LegalEntity[];
  destinationRiskEntities: LegalEntity[];
};

import { KassaError } from '../../platform/errors.js';

/**
 * A screening source could not answer (down, rate-limited, no list imported yet). Never a pass:
 * a deposit waits in COMPLIANCE_REVIEW, a withdrawal is not created (503, retry later).
 */
export class ScreeningUnavailableError extends KassaError {
  constructor(detail: string, retryAfterS = 60) {
    super(503, 'SCREENING_UNAVAILABLE', `Address screening is unavailable: ${detail}`, [], { 'retry-after': String(retryAfterS) });
  }
}

export interface ScreeningPort {
  /** `dictatedScore`: the sandbox honours a score a test dictates; live sources ignore it. */
  screen(network: string, address: string, dictatedScore?: string): Promise<RiskAssessment>;
}
