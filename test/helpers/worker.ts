/** The real graphile-worker on a test database, and a way to wait for what it does. */
import type { Runner } from 'graphile-worker';
import { startWorker } from '../../jobs/worker.js';
import type { Deps } from '../../server/deps.js';

export async function startTestWorker(deps: Deps): Promise<Runner> {
  return startWorker(deps, { concurrency: 4, pollInterval: 50, crontab: false });
}

/** Poll `probe` until it returns a truthy value (jobs run asynchronously); fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
