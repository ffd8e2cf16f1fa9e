/**
 * `npm run bench:ab -- --base <git ref> [options]`: this checkout's build (B) against another
 * commit's (A) on the create, in alternating rounds (bench/ab.ts). The base is checked out into a
 * temporary git worktree, built there with this checkout's node_modules, and removed afterwards.
 *
 *   --base <ref>          the commit to compare against (a branch, tag, sha or HEAD~1)
 *   --base-dir <dir>      a checkout already built, instead of --base (`.` for this one, to compare node flags)
 *   --rounds <n>          rounds, each side once a round, an even number (6)
 *   --duration <s>        seconds a side a round (5)
 *   --warmup <s>          unmeasured full load of each side first (10)
 *   --connections <n>     concurrent keep-alive connections (10)
 *   --pace <n>            also creates at this fixed rate after each full-speed phase, for its p99
 *   --a-node-args=<flags> node flags for A, space-separated
 *   --b-node-args=<flags> node flags for B
 *
 * Progress goes to stderr, the rounds and the summary to stdout.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, stopOnSignals, type Cleanup } from './env.js';
import { assertEvenRounds, formatRound, formatSummary, runAb, type AbOptions } from './ab.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    'base-dir': { type: 'string' },
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    pace: { type: 'string' },
    'a-node-args': { type: 'string' },
    'b-node-args': { type: 'string' },
  },
});

const number = (name: string, value: string, min: number, whole = false): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || (whole && !Number.isInteger(n))) {
    throw new Error(`--${name} must be a ${whole ? 'whole ' : ''}number of at least ${min}, not ${value}`);
  }
  return n;
};
const flags = (value: string | undefined) => (value ? value.split(' ').filter(Boolean) : []);

/** The run's settings from the options, all checked before anything is built or started. */
function parseSettings(): Omit<AbOptions, 'rootA' | 'rootB'> {
  if ((values.base === undefined) === (values['base-dir'] === undefined)) {
    throw new Error('give the commit to compare against: --base <git ref>, or --base-dir <built checkout>');
  }
  const rounds = number('rounds', values.rounds, 2, true);
  assertEvenRounds(rounds, '--rounds');
  return {
    nodeArgs: { A: flags(values['a-node-args']), B: flags(values['b-node-args']) },
    rounds,
    durationS: number('duration', values.duration, 1),
    warmupS: number('warmup', values.warmup, 0),
    connections: number('connections', values.connections, 1, true),
    ...(values.pace ? { paceRate: number('pace', values.pace, 1) } : {}),
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);
/** The temporary directory holding the base's worktree (`<dir>/base`), while there is one. */
let worktreeDir: string | null = null;
const removeWorktree = () => {
  if (!worktreeDir) return;
  // The directory first, then git's record of it: also right when `git worktree add` failed half-way.
  rmSync(worktreeDir, { recursive: true, force: true });
  worktreeDir = null;
  try {
    execFileSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
  } catch (error) {
    log(`git worktree prune failed: ${(error as Error).message}`);
  }
};

let active: Cleanup | null = null;
stopOnSignals(() => active, 'the A/B', removeWorktree);

async function main(): Promise<void> {
  const settings = parseSettings();
  let rootA: string;
  if (values.base !== undefined) {
    worktreeDir = mkdtempSync(join(tmpdir(), 'kassa-ab-'));
    const worktree = join(worktreeDir, 'base');
    log(`checking out ${values.base} into ${worktree} and building it`);
    execFileSync('git', ['worktree', 'add', '--detach', worktree, values.base], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: worktree, stdio: ['ignore', 'ignore', 'inherit'] });
    rootA = worktree;
  } else {
    rootA = resolve(values['base-dir']!);
  }
  const result = await runAb({ ...settings, rootA, rootB: ROOT, log, onCleanup: (cleanup) => (active = cleanup) });
  console.log(`A: ${values.base ?? rootA}${values['a-node-args'] ? ` ${values['a-node-args']}` : ''}; B: this checkout${values['b-node-args'] ? ` ${values['b-node-args']}` : ''}`);
  for (const round of result.rounds) console.log(formatRound(round));
  console.log(formatSummary(result.summary));
}

main().then(
  () => {
    removeWorktree();
    process.exit(0);
  },
  (error: unknown) => {
    removeWorktree();
    log(`bench:ab failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
