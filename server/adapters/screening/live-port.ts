/**
 * The ScreeningPort over the sanctions sources (ofac, chainalysis): a hit is
 * riskScore "10.0" with a `sanctions` owner; a source that cannot answer is
 * ScreeningUnavailableError (the deposit waits in COMPLIANCE_REVIEW, the
 * withdrawal is refused for now) — never a pass.
 */
import { ScreeningUnavailableError, type RiskAssessment, type ScreeningPort } from '../../modules/compliance/index.js';
import { ScreeningUnavailable } from './result.js';
import type { SanctionsScreening } from './sanctions-screening.js';

export class SanctionsScreeningPort implements ScreeningPort {
  constructor(readonly sanctions: SanctionsScreening) {}

  /** `dictatedScore` is the sandbox's; live screening ignores it. */
  async screen(network: string, address: string): Promise<RiskAssessment> {
    try {
      return await this.sanctions.screen(network, address);
    } catch (error) {
      if (error instanceof ScreeningUnavailable) throw new ScreeningUnavailableError(error.message, error.retryAfterS ?? 60);
      throw error;
    }
  }
}
