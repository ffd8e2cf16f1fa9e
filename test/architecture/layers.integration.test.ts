/**
 * The layer rules (.dependency-cruiser.cjs) can fail: run on a tiny fixture
 * tree that breaks each of them on purpose, dependency-cruiser reports every
 * break by rule name and exits non-zero; on Kassa's own tree it reports none.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = resolve(ROOT, 'node_modules/.bin/depcruise');
const CONFIG = resolve(ROOT, '.dependency-cruiser.cjs');

type Violation = { rule: { name: string }; from: string; to: string };

/** The exit code of the command CI runs (text output), and the violations in JSON (that output always exits 0). */
async function cruise(cwd: string): Promise<{ exitCode: number; violations: Violation[] }> {
  const args = ['--config', CONFIG, 'server', 'jobs', 'db'];
  const exitCode = await run(DEPCRUISE, args, { cwd }).then(
    () => 0,
    (err: { code: number }) => err.code,
  );
  const { stdout } = await run(DEPCRUISE, [...args, '--output-type', 'json'], { cwd, maxBuffer: 64 << 20 });
  return { exitCode, violations: (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations };
}

describe('layer rules', () => {
  it('fail on a tree that breaks them, naming each broken rule and import', { timeout: 120_000 }, async () => {
    const { exitCode, violations } = await cruise(resolve(import.meta.dirname, 'fixture'));
    expect(exitCode).not.toBe(0);
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(found).toEqual(
      expect.arrayContaining([
        'platform-imports-nothing-of-kassa: server/platform/clock.ts → server/modules/alpha/index.ts',
        'modules-only-through-index: server/modules/alpha/alpha.service.ts → server/modules/beta/beta.rules.ts',
        'modules-do-not-import-upwards: server/modules/beta/beta.rules.ts → server/edges/rest/routes.ts',
        'modules-do-not-import-upwards: server/modules/beta/beta.rules.ts → server/adapters/chain/sandbox.ts',
        'only-the-root-imports-adapters: server/modules/beta/beta.rules.ts → server/adapters/chain/sandbox.ts',
        'outside-modules-only-through-index: server/edges/rest/routes.ts → server/modules/beta/beta.rules.ts',
        'jobs-call-modules-not-edges: jobs/tasks/task.ts → server/edges/rest/routes.ts',
        'db-is-below-modules: db/schema.ts → server/modules/alpha/index.ts',
        'network-families-import-nothing-of-kassa: server/modules/networks/families/evm.rules.ts → server/modules/alpha/index.ts',
      ]),
    );
    expect(violations.some((v) => v.rule.name === 'no-circular')).toBe(true);
    // The clean files of the fixture (the sandbox adapter, beta's ports) break nothing.
    expect(violations.filter((v) => v.from === 'server/adapters/chain/sandbox.ts' || v.from === 'server/modules/beta/ports.ts')).toEqual([]);
  });

  // The whole tree takes a while on a loaded 2-core machine: one JSON run (CI's own run gives the exit code).
  it("pass on Kassa's own tree", { timeout: 180_000 }, async () => {
    const { stdout } = await run(DEPCRUISE, ['--config', CONFIG, '--output-type', 'json', 'server', 'jobs', 'db'], { cwd: ROOT, maxBuffer: 64 << 20 });
    const { violations, error } = (JSON.parse(stdout) as { summary: { violations: Violation[]; error: number } }).summary;
    expect(violations).toEqual([]);
    expect(error).toBe(0);
  });
});
