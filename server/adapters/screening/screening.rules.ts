/**
 * Several sanctions sources (KASSA_SANCTIONS_SOURCES) into one answer. Pure.
 *
 * THE RULE: a hit from any source is the answer (a sanctioned address stays sanctioned even if
 * another source could not answer); otherwise, if any source could not answer, the whole
 * screening cannot answer (the deposit waits in review: one source's silence is not a pass);
 * otherwise the address is not listed.
 */
import { NOT_LISTED, ScreeningUnavailable, type RiskAssessment } from './result.js';

export type SourceOutcome = { source: string; result: RiskAssessment } | { source: string; error: ScreeningUnavailable };

export function combineScreenings(outcomes: readonly SourceOutcome[]): RiskAssessment {
  const hits = outcomes.flatMap((o) => ('result' in o && o.result.riskScore === '10.0' ? [o.result] : []));
  if (hits.length > 0) return hits[0]!;
  const failure = outcomes.find((o): o is { source: string; error: ScreeningUnavailable } => 'error' in o);
  if (failure) throw failure.error;
  if (outcomes.length === 0) throw new ScreeningUnavailable('sanctions', 'unsupported_network', 'no screening source configured');
  return NOT_LISTED;
}
