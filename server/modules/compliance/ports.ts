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

export interface ScreeningPort {
  /** `dictatedScore`: the sandbox honours a score a test dictates; live sources ignore it. */
  screen(network: string, address: string, dictatedScore?: string): Promise<RiskAssessment>;
}
