/**
 * The operator CLI as a real child process (`npm run kassa`'s launcher, scripts/kassa.mjs) against a
 * test database, and the check of its `--json` output; `runTsx` runs any TypeScript file as a child
 * process.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { TEST_MASTER_KEY } from './app.js';

const run = promisify(execFile);
const CWD = process.cwd();
const TSX = join(CWD, 'node_modules/.bin/tsx');

export type CliResult = { code: number; stdout: string; stderr: string };

/** A child process: its exit code, stdout and stderr. */
async function runChild(file: string, args: string[], env: Record<string, string>, timeout: number): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: CWD, env: { ...process.env, ...env }, timeout });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean };
    // Killed at the timeout: tsx passes the SIGTERM on and exits 143, which is no answer of the command.
    if (e.killed) throw new Error(`${args.join(' ')} did not finish within ${timeout / 1000} s: ${e.stderr ?? ''}`);
    if (typeof e.code !== 'number') throw error; // spawn failure, not an exit code
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A TypeScript file run as a child process (`tsx`): its exit code, stdout and stderr. */
export function runTsx(script: string, args: string[], env: Record<string, string>, timeout: number): Promise<CliResult> {
  return runChild(TSX, [script, ...args], env, timeout);
}

/**
 * A `kassa` function bound to one database URL: exit code, stdout and stderr of one command, run as
 * `npm run kassa` runs it: the build's bundle when it is current (`npm test` builds first; ~0.7 s a
 * command alone), the sources through tsx otherwise (a test file run alone after an edit; 3 s or more).
 */
export function cliOn(databaseUrl: () => string) {
  return (...args: string[]): Promise<CliResult> =>
    runChild(process.execPath, ['scripts/kassa.mjs', ...args], { DATABASE_URL: databaseUrl(), KASSA_MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent', NODE_ENV: 'test' }, 60_000);
}

/** The stdout of a --json command: exactly one line holding one JSON object, nothing else. */
export function singleJson(stdout: string): Record<string, unknown> {
  expect(stdout.endsWith('\n')).toBe(true);
  const lines = stdout.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  const value: unknown = JSON.parse(lines[0]!);
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}
