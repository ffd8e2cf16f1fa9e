/** The A/B comparison's arithmetic (bench/ab.ts): the alternating order, the means, the rounds won. */
import { describe, expect, it } from 'vitest';
import { formatRound, formatSummary, sidesOfRound, summarizeAb, type AbRound } from '../../bench/ab.js';

const round = (index: number, side: 'A' | 'B', rps: number, extra: Partial<AbRound> = {}): AbRound => ({
  round: index,
  side,
  rps,
  creates: rps * 5,
  kassaCpuMs: 0.25,
  postgresCpuMs: 0.15,
  errors: 0,
  pacedP99Ms: null,
  ...extra,
});

describe('A/B rounds', () => {
  it('alternate the order, A B then B A, so a steady drift favours neither side', () => {
    expect([0, 1, 2, 3].map(sidesOfRound)).toEqual([['A', 'B'], ['B', 'A'], ['A', 'B'], ['B', 'A']]);
  });

  it('summarise each side by its means, and count the rounds B won', () => {
    const summary = summarizeAb([
      round(0, 'A', 2_000, { kassaCpuMs: 0.3, pacedP99Ms: 20 }),
      round(0, 'B', 2_400, { kassaCpuMs: 0.2, pacedP99Ms: 10 }),
      round(1, 'B', 2_100, { kassaCpuMs: 0.22, pacedP99Ms: 30 }),
      round(1, 'A', 2_200, { kassaCpuMs: 0.26, errors: 3, pacedP99Ms: 40 }),
    ]);
    expect(summary.A).toEqual({ rps: 2_100, kassaCpuMs: 0.28, postgresCpuMs: 0.15, pacedP99Ms: 30, errors: 3 });
    expect(summary.B.rps).toBe(2_250);
    expect(summary.B.kassaCpuMs).toBeCloseTo(0.21, 10);
    expect(summary.B.pacedP99Ms).toBe(20);
    expect(summary.rpsRatio).toBeCloseTo(2_250 / 2_100, 10);
    expect(summary.bFaster).toBe(1);
    expect(summary.rounds).toBe(2);
  });

  it('leave out what could not be measured instead of counting it as zero, and win no round with one side missing', () => {
    const summary = summarizeAb([
      round(0, 'A', 1_000, { postgresCpuMs: null }),
      round(0, 'B', 1_500, { postgresCpuMs: 0.2 }),
      round(1, 'B', 1_800),
    ]);
    expect(summary.A.postgresCpuMs).toBeNull();
    expect(summary.B.postgresCpuMs).toBeCloseTo(0.175, 10);
    expect(summary.A.pacedP99Ms).toBeNull();
    expect(summary.bFaster).toBe(1);
    expect(summary.rounds).toBe(2);
  });

  it('print a round with what was measured, and its errors only when there were some', () => {
    expect(formatRound(round(1, 'B', 2_345.6, { kassaCpuMs: 0.2114, postgresCpuMs: null }))).toBe(
      'round 2 B: 2,346 creates/s, CPU per create Kassa 0.211 ms, PostgreSQL — ms',
    );
    expect(formatRound(round(0, 'A', 1_000, { pacedP99Ms: 12.34, errors: 2 }))).toBe(
      'round 1 A: 1,000 creates/s, CPU per create Kassa 0.250 ms, PostgreSQL 0.150 ms, paced p99 12.3 ms, 2 errors',
    );
  });

  it('print a line a side and the verdict', () => {
    const text = formatSummary(summarizeAb([round(0, 'A', 2_000), round(0, 'B', 2_500, { postgresCpuMs: null })]));
    expect(text.split('\n')).toEqual([
      'A: 2,000 creates/s, CPU per create Kassa 0.250 ms, PostgreSQL 0.150 ms, 0 errors',
      'B: 2,500 creates/s, CPU per create Kassa 0.250 ms, PostgreSQL — ms, 0 errors',
      'B/A 1.250; B faster in 1 of 1 rounds',
    ]);
  });
});
