/**
 * graphile-worker does not wait for the statement that releases a job that has run, so when it
 * fails (PostgreSQL restarting at that moment) the rejection is unhandled and Node ends the
 * process: the rare crash of test/reliability/database-faults in CI. Kassa's entry logs that one
 * rejection and carries on (jobs/release-failures.ts); any other still ends the process.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJobReleaseFailure, survivingJobReleaseFailures } from '../../jobs/release-failures.js';
import { runTsx, type CliResult } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const CHILD = join(import.meta.dirname, 'fixtures/release-failure.child.ts');

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs the child; its exit code and what it printed. */
const child = (...args: string[]): Promise<CliResult> => runTsx(CHILD, args, { DATABASE_URL: db.url }, 60_000);

describe('a job whose release fails after it has run', () => {
  it("ends a bare graphile-worker process (the library's unhandled rejection)", async () => {
    const { code, stdout, stderr } = await child();
    expect(stdout).toContain('task ran');
    expect(stdout).not.toContain('alive');
    expect(code).toBe(1);
    expect(stderr).toMatch(/ECONNREFUSED \(refused by the test\)/);
    expect(stderr).toMatch(/graphile-worker\/(dist|src)\/sql\/completeJobs\.[jt]s/);
  });

  it("is logged, and the process carries on, with Kassa's handler", async () => {
    const { code, stdout } = await child('--guard');
    expect(code).toBe(0);
    expect(stdout).toContain('task ran');
    expect(stdout).toContain('alive');
    const logged = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: string; message: string; err: string });
    expect(logged).toEqual([expect.objectContaining({ level: 'error', message: expect.stringContaining('could not be released'), err: expect.stringContaining('ECONNREFUSED') })]);
  });
});

describe('isJobReleaseFailure / survivingJobReleaseFailures', () => {
  it('recognises only a rejection raised through graphile-worker releasing a job', () => {
    const at = (file: string) => Object.assign(new Error('terminating connection due to administrator command'), { stack: `error: terminating connection\n    at async batchCompleteJobs (/srv/kassa/node_modules/graphile-worker/dist/sql/${file}:37:9)` });
    expect(isJobReleaseFailure(at('completeJobs.js'))).toBe(true);
    expect(isJobReleaseFailure(at('failJobs.js'))).toBe(true);
    // Where source maps are on (tsx), the same frames name graphile-worker's sources.
    const mapped = Object.assign(new Error('x'), { stack: 'Error: x\n    at batchCompleteJobs (/srv/kassa/node_modules/graphile-worker/src/sql/completeJobs.ts:52:11)' });
    expect(isJobReleaseFailure(mapped)).toBe(true);
    expect(isJobReleaseFailure(at('getJobs.js'))).toBe(false);
    expect(isJobReleaseFailure(new Error('a bug of our own'))).toBe(false);
    expect(isJobReleaseFailure('node_modules/graphile-worker/dist/sql/completeJobs.js')).toBe(false);
  });

  it('rethrows anything else, so the process still ends as Node would end it', () => {
    const logged: string[] = [];
    const handler = survivingJobReleaseFailures({ error: (_fields, message) => logged.push(message) });
    const ours = new Error('a bug of our own');
    expect(() => handler(ours)).toThrow(ours);
    expect(logged).toEqual([]);
  });
});
