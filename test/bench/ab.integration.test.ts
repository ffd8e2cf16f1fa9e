/**
 * `npm run bench:ab` (bench/ab.ts, bench/ab-run.ts) against real processes: two built Kassas on one
 * database taking turns, here both this checkout's build, for a second each. Speed is never
 * asserted; what is: both sides measured in the alternating order, every create answered, the
 * summary made of those rounds. The command line refuses what it cannot run before starting anything.
 */
import { execFile } from 'node:child_process';
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
    const { rounds, summary } = await runAb({
      rootA: ROOT,
      rootB: ROOT,
      rounds: 2,
      durationS: 1,
      warmupS: 0,
      connections: 4,
      paceRate: 40,
      databaseUrl: db.url,
      log: (line) => lines.push(line),
    });
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

  it('refuses to start without a base, or with a round count it cannot run', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/ab-run.ts', ...args], { cwd: ROOT }).then(
        () => '',
        (error: { stderr: string }) => error.stderr,
      );
    expect(await run([])).toContain('give the commit to compare against: --base <git ref>, or --base-dir <built checkout>');
    expect(await run(['--base', 'HEAD', '--base-dir', '.'])).toContain('give the commit to compare against');
    expect(await run(['--base-dir', '.', '--rounds', '0'])).toContain('--rounds must be a number of at least 1, not 0');
  }, 60_000);
});
