/**
 * The ScreeningPort over the configured sanctions sources: each is asked at once, and their
 * answers combined by screening.rules.ts.
 */
import { ScreeningUnavailable, type RiskAssessment, type SanctionsScreener } from './result.js';
import { combineScreenings, type SourceOutcome } from './screening.rules.js';

export class SanctionsScreening {
  constructor(private readonly sources: readonly SanctionsScreener[]) {}

  /** Throws ScreeningUnavailable when no hit was found and some source could not answer. */
  async screen(network: string, address: string): Promise<RiskAssessment> {
    const outcomes = await Promise.all(
      this.sources.map(async (s): Promise<SourceOutcome> => {
        try {
          return { source: s.name, result: await s.screen(network, address) };
        } catch (error) {
          // Any failure, typed or not (a database error), is "cannot answer", never a pass.
          const e =
            error instanceof ScreeningUnavailable
              ? error
              : new ScreeningUnavailable(s.name, 'network', error instanceof Error ? error.message : String(error), null, { cause: error });
          return { source: s.name, error: e };
        }
      }),
    );
    return combineScreenings(outcomes);
  }
}
