/** compliance: the screening port and its assessment shape. Decisions on deposits live in deposits. */
export type { LegalEntity, RiskAssessment, ScreeningPort } from './ports.js';
export { ScreeningUnavailableError } from './ports.js';
