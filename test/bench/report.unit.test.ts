import { describe, expect, it } from 'vitest';
import { makeRow, renderMarkdown, type Report } from '../../bench/report.js';

const machine = { cpus: 2, cpuModel: 'test CPU', memoryGiB: 24, node: '20.0.0', postgres: '17.5' };
const options = { durationS: 10, connections: 10, poolSize: 10, callbacks: 10_000, workerConcurrency: 12, checkoutRuns: 20, scanBlocks: 1000 };
const p99 = (kassa: number) =>
  makeRow({ scenario: '1 create', name: 'create latency p99 at half the max rate, paced', metric: 'p99 latency', unit: 'ms', kassa, digits: 2, target: { of: 'kassa', op: '<=', value: 25 } });
const report = (extra: Partial<Report['options']>, rows = [p99(18.33)]): Report => ({ generatedAt: '2026-11-29T00:00:00.000Z', machine, options: { ...options, ...extra }, scenarios: rows, notes: [] });

describe('the bench report', () => {
  it("names the paced phases' own length in its first line, and leaves it out of a report from before they had one", () => {
    const header = (r: Report) => renderMarkdown(r).split('\n')[0];
    expect(header(report({ pacedS: 40 }))).toContain('10 s per load phase (paced creates 40 s), 10 connections');
    expect(header(report({}))).toContain('10 s per load phase, 10 connections');
    expect(header(report({}))).not.toContain('paced creates');
  });

  it('marks a met target and a missed one', () => {
    const rows = renderMarkdown(report({ pacedS: 40 }, [p99(24.83), p99(25.01)])).split('\n').filter((line) => line.startsWith('| 1 create'));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/\| 24\.83 \|.*\| Kassa ≤ 25 \| ✓ \|$/);
    expect(rows[1]).toMatch(/\| 25\.01 \|.*\| Kassa ≤ 25 \| ✗ miss \|$/);
  });
});
