/**
 * Ctrl-C of `npm run bench` in the middle of a load phase stops everything the bench started. The
 * bench's embedded PostgreSQL runs in a process group of its own (so a terminal's Ctrl-C reaches
 * the bench, which stops it last), so a bench killed before its cleanup leaves the cluster running.
 * Run through the `tsx` command, it was: tsx relays a signal to its child and kills it with SIGKILL
 * when a busy event loop does not acknowledge in time, and three of three Ctrl-Cs under load left
 * the postmaster behind. The scripts now run the bench in one node process (`node --import tsx`).
 *
 * The test runs the `bench` script's own command (the part after its build step, which the suite has
 * done already and which must not rebuild dist/ under the tests using it) in a process group of its
 * own, as a terminal would, and sends that group one SIGINT while Kassa is under full load.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { ROOT } from '../../bench/env.js';
import { alive, KASSA_BUNDLE, procStat } from '../reliability/support.js';

const scratch = mkdtempSync(join(tmpdir(), 'kassa-bench-signal-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The command of an npm script after its build step, as argv. */
function scriptCommand(name: string): string[] {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const command = scripts[name]!.split('&&').at(-1)!.trim();
  return command.split(/\s+/);
}

type Process = { pid: number; ppid: number; cmdline: string };

/** Every process descending from `root`, with its command line. */
function descendantsOf(root: number): Process[] {
  const all: Process[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    try {
      if (fields) all.push({ pid: Number(entry), ppid: Number(fields[1]), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      // exited meanwhile
    }
  }
  const found: Process[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

describe('npm run bench, interrupted', () => {
  it('runs the bench in one node process, not under the tsx command', () => {
    for (const script of ['bench', 'bench:ab', 'soak']) expect(scriptCommand(script).slice(0, 3), script).toEqual(['node', '--import', 'tsx']);
  });

  it('stops its Kassa and its embedded PostgreSQL on one SIGINT to its process group under load', async () => {
    const [command, ...args] = scriptCommand('bench');
    const bench = spawn(command!, [...args, '--only', 'create', '--warmup', '0', '--duration', '20', '--out', join(scratch, 'report.json')], {
      cwd: ROOT,
      detached: true, // a process group of its own, like a terminal's foreground job
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    onTestFinished(() => {
      if (alive(bench.pid!)) process.kill(-bench.pid!, 'SIGINT'); // a test failing before its signal still stops the bench
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
    const underLoad = new Promise<void>((resolve, reject) => {
      bench.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('create: Kassa at full speed')) resolve();
      });
      void exited.then(() => reject(new Error(`the bench exited before its load phase:\n${stderr}`)));
    });
    await underLoad;
    await new Promise((r) => setTimeout(r, 1_000));
    const started = descendantsOf(bench.pid!);
    const postmaster = started.find((p) => /\/postgres -D .*kassa-bench-pg-/.test(p.cmdline));
    const kassa = started.find((p) => p.cmdline.includes(KASSA_BUNDLE));
    expect(postmaster, started.map((p) => p.cmdline).join('\n')).toBeDefined();
    expect(kassa).toBeDefined();
    const dataDir = /-D (\S+)/.exec(postmaster!.cmdline)![1]!;
    // Whatever fails below, nothing of the bench outlives the test (the postmaster gets its fast shutdown).
    onTestFinished(() => {
      for (const [pid, signal] of [[bench.pid!, 'SIGKILL'], [kassa!.pid, 'SIGKILL'], [postmaster!.pid, 'SIGINT']] as const) {
        if (alive(pid)) process.kill(pid, signal);
      }
    });

    process.kill(-bench.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('SIGINT: stopping what the bench started');
    expect(alive(postmaster!.pid), `postmaster ${postmaster!.pid} still running`).toBe(false);
    expect(alive(kassa!.pid), `Kassa ${kassa!.pid} still running`).toBe(false);
    expect(existsSync(dirname(dataDir)), `${dirname(dataDir)} left behind`).toBe(false);
  }, 90_000);
});
