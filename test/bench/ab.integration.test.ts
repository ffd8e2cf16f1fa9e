/**
 * `npm run bench:ab` (bench/ab.ts, bench/ab-run.ts) against real processes: two built Kassas on one
 * database taking turns, here both this checkout's build told apart by their node flags, for a
 * second each. Speed is never asserted; what is: each side started with its own flags, both measured
 * in the alternating order, every create answered and written once, the summary made of those
 * rounds. The command line refuses bad options before it builds or starts anything, and a base that
 * cannot be checked out leaves no worktree behind.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAb } from '../../bench/ab.js';
import { ROOT } from '../../bench/env.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

describe('npm run bench:ab', () => {
  it('runs both builds in turns, A B then B A, and summarises those rounds', async () => {
    const lines: string[] = [];
    const commandLines: Record<string, string[]> = {};
    const { rounds, summary } = await runAb({
      rootA: ROOT,
      rootB: ROOT,
      nodeArgs: { A: ['--max-semi-space-size=8'], B: ['--max-semi-space-size=16'] },
      onStarted: (side, kassa) => (commandLines[side] = readFileSync(`/proc/${kassa.pid}/cmdline`, 'utf8').split('\0')),
      rounds: 2,
      durationS: 1,
      warmupS: 0,
      // One connection: enough to measure both sides, and the rest of the suite (timing tests among it)
      // keeps most of the two CPUs. With 4, a paced load test running beside it was starved for ~0.7 s.
      connections: 1,
      paceRate: 40,
      databaseUrl: db.url,
      log: (line) => lines.push(line),
    });
    expect(commandLines.A).toContain('--max-semi-space-size=8');
    expect(commandLines.A).not.toContain('--max-semi-space-size=16');
    expect(commandLines.B).toContain('--max-semi-space-size=16');
    expect(rounds.map((r) => `${r.round}${r.side}`)).toEqual(['0A', '0B', '1B', '1A']);
    for (const r of rounds) {
      expect(r.rps, `${r.round}${r.side}`).toBeGreaterThan(0);
      expect(r.errors, `${r.round}${r.side}`).toBe(0);
      expect(r.pacedP99Ms, `${r.round}${r.side}`).toBeGreaterThan(0);
      expect(r.kassaCpuMs, `${r.round}${r.side}`).toBeGreaterThan(0);
    }
    expect(summary.rounds).toBe(2);
    expect(summary.A.rps).toBeCloseTo((rounds[0]!.rps + rounds[3]!.rps) / 2, 6);
    expect(summary.B.rps).toBeCloseTo((rounds[1]!.rps + rounds[2]!.rps) / 2, 6);
    expect(lines.filter((line) => line.startsWith('round '))).toHaveLength(4);
    // Every create answered 2xx, by either side, is one payment in the database (no warm-up ran).
    const [row] = await db.sql<{ count: string }[]>`select count(*)::text as count from payments where client_payment_id like 'ab-%'`;
    expect(Number(row!.count)).toBe(rounds.reduce((sum, r) => sum + r.creates, 0));
  }, 120_000);

  it('refuses bad options before building anything, and leaves no worktree behind a base it cannot check out', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/ab-run.ts', ...args], { cwd: ROOT }).then(
        () => 'exit 0',
        (error: { code: number; stderr: string }) => `exit ${error.code}: ${error.stderr}`,
      );
    expect(await run([])).toContain('exit 1: bench:ab failed: give the commit to compare against: --base <git ref>, or --base-dir <built checkout>');
    expect(await run(['--base', 'HEAD', '--base-dir', '.'])).toContain('give the commit to compare against');
    expect(await run(['--base', 'HEAD', '--rounds', '3'])).toContain('--rounds must be even (A B, then B A), not 3');
    expect(await run(['--base', 'HEAD', '--rounds', '2.5'])).toContain('--rounds must be a whole number of at least 2, not 2.5');
    expect(await run(['--base-dir', '.', '--duration', '0'])).toContain('--duration must be a number of at least 1, not 0');
    const worktrees = () => execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
    const abDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('kassa-ab-'));
    const [worktreesBefore, dirsBefore] = [worktrees(), abDirs()];
    const failed = await run(['--base', 'no-such-ref-for-kassa-ab']);
    expect(failed).toMatch(/^exit 1: /);
    expect(failed).toContain('git worktree add');
    expect(worktrees()).toBe(worktreesBefore);
    expect(abDirs()).toEqual(dirsBefore);
  }, 60_000);
});
