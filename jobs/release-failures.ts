/**
 * A finished job whose release fails must not end the process.
 *
 * graphile-worker (0.17.3; 0.18.0 too) does not wait for the statement that releases a job once
 * its task has run (`worker.js`: `completeJob(job)` and `failJob(…)` without `await` or `catch`).
 * When that statement fails — PostgreSQL restarting at that moment: "terminating connection due to
 * administrator command" — its rejection is unhandled, and Node ends the process on an unhandled
 * rejection. That is how `test/reliability/database-faults` lost its Kassa once in a few CI runs.
 *
 * Nothing is lost by carrying on: the job stays locked, as after a crash, and runs again when its
 * lock is taken for stale (graphile-worker's four hours; payout tasks sooner, by
 * `release_stale_payouts`); every task is idempotent for that reason. Any other unhandled rejection
 * still ends the process, as Node would.
 */

/**
 * Whether an unhandled rejection is graphile-worker failing to release a job that has run: raised
 * through its `sql/completeJobs` or `sql/failJobs` (`dist/…js`, or `src/…ts` where source maps are on).
 */
export function isJobReleaseFailure(reason: unknown): boolean {
  return reason instanceof Error && /graphile-worker[\\/](dist|src)[\\/]sql[\\/](completeJobs|failJobs)\.[jt]s\b/.test(reason.stack ?? '');
}

type ErrorLog = { error: (fields: Record<string, unknown>, message: string) => void };

/** For the process entry: logs a job release failure; rethrows anything else (Node's own behaviour). */
export function survivingJobReleaseFailures(log: ErrorLog): (reason: unknown) => void {
  return (reason) => {
    if (!isJobReleaseFailure(reason)) throw reason;
    log.error({ err: reason, component: 'worker' }, 'a finished job could not be released (database unreachable); it stays locked and runs again when the lock is taken for stale');
  };
}
