/**
 * Keeps `npm run bench` working: every scenario for about a second on a
 * fresh database of the test server, then the report's structure. Speed is
 * never asserted. Without /usr/bin/chromium the browser timings are null
 * (KASSA_REQUIRE_BROWSER=1 makes them mandatory).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBench } from '../bench/harness.js';
import { README_END, README_START, renderMarkdown, replaceReadmeSection, type Report } from '../bench/report.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';

const requireBrowser = process.env.KASSA_REQUIRE_BROWSER === '1';
let db: TestDatabase;
let report: Report;
let elapsedS: number;

beforeAll(async () => {
  db = await createTestDatabase();
  const started = performance.now();
  // KASSA_BENCH_LOG=1 shows the progress of each phase.
  const log = process.env.KASSA_BENCH_LOG === '1' ? (m: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${m}\n`) : undefined;
  report = await runBench({ databaseUrl: db.url, durationS: 1, warmupS: 0, callbacks: 50, checkoutRuns: 1, scanBlocks: 20, requireBrowser, ...(log ? { log } : {}) });
  elapsedS = (performance.now() - started) / 1000;
}, 300_000);

afterAll(async () => {
  await db?.drop();
});

const isNumberOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

describe('npm run bench (smoke)', () => {
  it('describes the machine', () => {
    const m = report.machine;
    expect(m.cpus).toBeGreaterThan(0);
    expect(typeof m.cpuModel).toBe('string');
    expect(m.memoryGiB).toBeGreaterThan(0);
    expect(m.node).toBe(process.versions.node);
    expect(m.postgres).toMatch(/^\d+/);
    expect(elapsedS).toBeGreaterThan(0);
  });

  it('has every scenario, each row with the six fields, finite numbers and ratio = kassa / limit', () => {
    const scenarios = new Set(report.scenarios.map((r) => r.scenario.split(' ')[0]));
    expect([...scenarios].sort()).toEqual(['1', '2', '3', '4', '5', '6']);
    for (const row of report.scenarios) {
      for (const field of ['name', 'metric', 'unit', 'kassa', 'limit', 'ratio'] as const) expect(row, `${row.name}: ${field}`).toHaveProperty(field);
      expect(typeof row.name).toBe('string');
      expect(typeof row.metric).toBe('string');
      expect(typeof row.unit).toBe('string');
      for (const field of ['kassa', 'limit', 'ratio'] as const) expect(isNumberOrNull(row[field]), `${row.name}: ${field} = ${row[field]}`).toBe(true);
      if (row.kassa !== null && row.limit !== null && row.limit !== 0) {
        expect(row.ratio, row.name).not.toBeNull();
        expect(Math.abs(row.ratio! - row.kassa / row.limit), row.name).toBeLessThanOrEqual(0.0005 + 1e-9);
      } else {
        expect(row.ratio, row.name).toBeNull();
      }
      expect(row).toHaveProperty('target');
      if (row.target) {
        expect(['kassa', 'ratio']).toContain(row.target.of);
        expect(['<=', '>=']).toContain(row.target.op);
        expect(Number.isFinite(row.target.value)).toBe(true);
      }
    }
  });

  it('measures Kassa in every server scenario (a number, not null)', () => {
    const value = (name: string) => report.scenarios.find((r) => r.name === name)?.kassa;
    expect(value('create payment vs raw INSERT+COMMIT')).toEqual(expect.any(Number));
    expect(value('read payment (3 deposits) vs raw PK SELECT')).toEqual(expect.any(Number));
    expect(value('callback drain vs graphile-worker no-op jobs')).toEqual(expect.any(Number));
    if (existsSync(new URL('../dist/widget/crypto-checkout.js', import.meta.url))) expect(value('widget size')).toEqual(expect.any(Number));
    expect(value('Kassa server RSS peak during create (child process)')).toEqual(expect.any(Number));
  });

  it("reads the batched statements of create and read from Kassa's /metrics: items per statement, round trip, time held", () => {
    const value = (name: string) => report.scenarios.find((r) => r.name === name)?.kassa;
    for (const what of ['create at max rate', 'read']) {
      // A statement carries at least one item and takes some time; a batch that went at once was held 0 ms.
      expect(value(`${what}: items per batched statement (mean)`), what).toBeGreaterThanOrEqual(1);
      expect(value(`${what}: round trip of a batched statement (mean)`), what).toBeGreaterThan(0);
      expect(value(`${what}: batch held behind an in-flight one (mean)`), what).toBeGreaterThanOrEqual(0);
    }
  });

  it('measures the HTTP floor of create and read: a bare route doing only the limit\'s statement, every request answered', () => {
    for (const name of ['HTTP floor: bare Fastify + the raw INSERT, vs raw INSERT+COMMIT', 'HTTP floor: bare Fastify + the raw SELECT, vs raw PK SELECT']) {
      const row = report.scenarios.find((r) => r.name === name);
      expect(row?.kassa, name).toBeGreaterThan(0);
      expect(row?.note, name).toContain('(0 errors)');
    }
  });

  it('measures create, raw INSERT and HTTP floor again in turns, each with its own rate', () => {
    const create = report.scenarios.find((r) => r.name === 'create payment vs raw INSERT+COMMIT, in turns');
    const floor = report.scenarios.find((r) => r.name === 'HTTP floor vs raw INSERT+COMMIT, in turns');
    expect(create?.kassa).toBeGreaterThan(0);
    expect(floor?.kassa).toBeGreaterThan(0);
    // One raw INSERT rate for both rows: the same turns.
    expect(create?.limit).toBeGreaterThan(0);
    expect(floor?.limit).toBe(create?.limit);
  });

  it("sums a create's CPU over Kassa, PostgreSQL and the load generator, against the raw INSERT's over PostgreSQL and its callers", () => {
    const row = (name: string) => report.scenarios.find((r) => r.name === name);
    const total = row('create CPU per request, Kassa + PostgreSQL + load generator, vs per raw INSERT')!;
    const server = row('create CPU per request vs bare Fastify')!.kassa;
    const pg = row('create PostgreSQL CPU per request vs per raw INSERT')!;
    const generator = row('create load generator CPU per request vs per raw INSERT')!;
    expect(total).toBeDefined();
    // The database's CPU is read from /proc for a server on this machine only: without it the sum is unknown, not smaller.
    if (server === null || pg.kassa === null || pg.limit === null) {
      expect(total.kassa).toBeNull();
      return;
    }
    // Each part is rounded to 0.001 ms in its own row.
    expect(total.kassa!).toBeCloseTo(server + pg.kassa + generator.kassa!, 2);
    expect(total.limit!).toBeCloseTo(pg.limit + generator.limit!, 2);
  });

  it('measures the create again on a Kassa logging at the default level: one access line a create, into its log file', () => {
    const rate = report.scenarios.find((r) => r.name === 'create at the default LOG_LEVEL (info) vs silent');
    const cpu = report.scenarios.find((r) => r.name === 'create CPU per request at the default LOG_LEVEL (info) vs silent');
    expect(rate?.kassa).toBeGreaterThan(0);
    expect(cpu?.kassa).toBeGreaterThan(0);
    const [, lines, creates] = /: ([\d,]+) access lines of creates for ([\d,]+) creates and 0 errors/.exec(rate?.note ?? '') ?? [];
    const [logged, counted] = [Number(lines?.replaceAll(',', '')), Number(creates?.replaceAll(',', ''))];
    expect(counted).toBeGreaterThan(0);
    // Every counted create has its line; a create still in flight when a turn ended has one too.
    expect(logged).toBeGreaterThanOrEqual(counted);
    expect(logged - counted).toBeLessThanOrEqual(2 * report.options.connections);
  });

  it('reports the browser timings when Chromium is there (mandatory with KASSA_REQUIRE_BROWSER=1)', () => {
    const rows = report.scenarios.filter((r) => /^(address visible|deposit push)/.test(r.name));
    // p50 and p95 of: the address in the open tab (the targets), the address in a fresh context, the push.
    expect(rows.map((r) => r.name).sort()).toEqual([
      'address visible p50', 'address visible p50, fresh browser context', 'address visible p95', 'address visible p95, fresh browser context', 'deposit push p50', 'deposit push p95',
    ]);
    expect(rows.filter((r) => r.target).map((r) => r.name).sort()).toEqual(['address visible p50', 'address visible p95', 'deposit push p50', 'deposit push p95']);
    const measured = rows.every((r) => typeof r.kassa === 'number');
    if (requireBrowser) expect(measured).toBe(true);
    if (!measured) expect(rows.every((r) => r.kassa === null)).toBe(true);
    // The warm-up round's pages are left out of the percentiles, and their times are in the note.
    else expect(rows.find((r) => r.name === 'address visible p50')?.note).toMatch(/Not counted: .* after \d+ ms in the tab, \d+ ms in a fresh context$/);
  });

  it('renders the summary and fits the README section', () => {
    const table = renderMarkdown(JSON.parse(JSON.stringify(report)) as Report);
    for (const row of report.scenarios) expect(table).toContain(row.name);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(README_START);
    const updated = replaceReadmeSection(readme, table);
    expect(updated).toContain(table.trimEnd());
    expect(updated.indexOf(README_END)).toBeGreaterThan(updated.indexOf(README_START));
  });
});
