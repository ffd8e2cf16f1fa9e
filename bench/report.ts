/**
 * The bench report: one row per measured quantity, Kassa next to the
 * physical limit measured in the same run (`ratio = kassa / limit`), and an
 * optional target (a compass, not an assertion). Rendered as JSON
 * (bench/report.json), a markdown table (stdout) and a README section.
 */
import { round } from './stats.js';

/** A target on the Kassa value or on the ratio, e.g. `{ of: 'ratio', op: '>=', value: 0.5 }`. */
export type Target = { of: 'kassa' | 'ratio'; op: '<=' | '>='; value: number };

export type Row = {
  /** Scenario number and short name, e.g. "1 create". */
  scenario: string;
  name: string;
  metric: string;
  unit: string;
  kassa: number | null;
  limit: number | null;
  /** kassa / limit (of the rounded values), null unless both are present. */
  ratio: number | null;
  target: Target | null;
  /** Whether the target is met; null without a target or a value. */
  met: boolean | null;
  note?: string;
};

export type Machine = { cpus: number; cpuModel: string; memoryGiB: number; node: string; postgres: string | null };

export type BenchOptionsUsed = {
  durationS: number;
  /** Absent in reports from before the paced phases had their own length. */
  pacedS?: number;
  connections: number;
  poolSize: number;
  callbacks: number;
  workerConcurrency: number;
  checkoutRuns: number;
  scanBlocks?: number;
};

export type Report = {
  generatedAt: string;
  machine: Machine;
  options: BenchOptionsUsed;
  scenarios: Row[];
  notes: string[];
};

export type RowInput = {
  scenario: string;
  name: string;
  metric: string;
  unit: string;
  kassa: number | null | undefined;
  limit?: number | null | undefined;
  target?: Target | null;
  /** Decimals kept for kassa and limit. */
  digits?: number;
  note?: string;
};

export function makeRow(input: RowInput): Row {
  const digits = input.digits ?? 1;
  const kassa = round(input.kassa, digits);
  const limit = round(input.limit, digits);
  const ratio = kassa !== null && limit !== null && limit !== 0 ? round(kassa / limit, 3) : null;
  const target = input.target ?? null;
  const subject = target?.of === 'ratio' ? ratio : kassa;
  const met = target && subject !== null ? (target.op === '<=' ? subject <= target.value : subject >= target.value) : null;
  return {
    scenario: input.scenario,
    name: input.name,
    metric: input.metric,
    unit: input.unit,
    kassa,
    limit,
    ratio,
    target,
    met,
    ...(input.note ? { note: input.note } : {}),
  };
}

const fmt = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: 3 }));

export function targetText(target: Target | null): string {
  if (!target) return '';
  return `${target.of === 'ratio' ? 'ratio' : 'Kassa'} ${target.op === '<=' ? '≤' : '≥'} ${target.value}`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function machineLine(m: Machine): string {
  return `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Node ${m.node}, PostgreSQL ${m.postgres ?? '?'}`;
}

/** The markdown summary: a table with misses marked ✗, then the notes. */
export function renderMarkdown(report: Report): string {
  const lines = [
    `Kassa bench, ${report.generatedAt} — ${machineLine(report.machine)}; ${report.options.durationS} s per load phase` +
      `${report.options.pacedS === undefined ? '' : ` (paced creates ${report.options.pacedS} s)`}, ` +
      `${report.options.connections} connections, pool ${report.options.poolSize}, worker concurrency ${report.options.workerConcurrency}.`,
    '',
    '| # | measurement | metric | Kassa | limit | ratio | unit | target | |',
    '|---|---|---|--:|--:|--:|---|---|---|',
  ];
  for (const r of report.scenarios) {
    const mark = r.met === null ? '' : r.met ? '✓' : '✗ miss';
    lines.push(
      `| ${cell(r.scenario)} | ${cell(r.name)} | ${cell(r.metric)} | ${fmt(r.kassa)} | ${fmt(r.limit)} | ${fmt(r.ratio)} | ${cell(r.unit)} | ${cell(targetText(r.target))} | ${mark} |`,
    );
  }
  const notes = [...report.notes, ...report.scenarios.filter((r) => r.note).map((r) => `${r.name}: ${r.note}`)];
  if (notes.length) lines.push('', ...notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}

export const README_START = '<!-- bench:start -->';
export const README_END = '<!-- bench:end -->';

/** `readme` with the text between the bench markers replaced by `body`; throws when the markers are missing. */
export function replaceReadmeSection(readme: string, body: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${README_START} … ${README_END} section`);
  return `${readme.slice(0, start + README_START.length)}\n${body.trimEnd()}\n${readme.slice(end)}`;
}
