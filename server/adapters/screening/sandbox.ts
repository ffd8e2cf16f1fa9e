/**
 * The sandbox `ScreeningPort`: a deterministic assessment derived from the
 * address, or the score a test helper dictates, so every outcome can be
 * demonstrated. Live sources implement the same port beside this file.
 */
import { createHash } from 'node:crypto';
import type { LegalEntity, RiskAssessment, ScreeningPort } from '../../modules/compliance/index.js';
import { Dec } from '../../modules/money/index.js';

/** Illustrative entities by score band, from clean to illicit. */
const BANDS: { below: number; owner: LegalEntity; sources: LegalEntity[]; destinations: LegalEntity[] }[] = [
  { below: 3, owner: { name: 'Unhosted wallet', category: 'unhosted_wallet' }, sources: [], destinations: [] },
  {
    below: 5,
    owner: { name: 'Retail exchange', category: 'exchange' },
    sources: [{ name: 'P2P marketplace', category: 'p2p_exchange' }],
    destinations: [],
  },
  {
    below: 8,
    owner: { name: 'Unlicensed exchange', category: 'high_risk_exchange' },
    sources: [{ name: 'Coin mixer', category: 'mixer' }],
    destinations: [{ name: 'Gambling site', category: 'gambling' }],
  },
  {
    below: Infinity,
    owner: { name: 'Sanctioned entity', category: 'sanctions' },
    sources: [{ name: 'Darknet market', category: 'darknet_market' }, { name: 'Ransomware', category: 'ransomware' }],
    destinations: [{ name: 'Coin mixer', category: 'mixer' }],
  },
];

/** The sandbox score of an address when none is dictated: 0.0–2.9, always clean. */
export function sandboxScore(network: string, address: string): string {
  const byte = createHash('sha256').update(`${network}:${address}`).digest()[0]!;
  return new Dec(byte % 30).div(10).toFixed(1);
}

export class SandboxScreening implements ScreeningPort {
  async screen(network: string, address: string, dictatedScore?: string): Promise<RiskAssessment> {
    const riskScore = dictatedScore ?? sandboxScore(network, address);
    const band = BANDS.find((b) => new Dec(riskScore).lt(b.below))!;
    return { riskScore, addressOwner: band.owner, sourceRiskEntities: band.sources, destinationRiskEntities: band.destinations };
  }
}
