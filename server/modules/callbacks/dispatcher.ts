/**
 * The callback dispatcher: one per worker process. It claims due deliveries
 * in batches (delivery.service.ts `claimDue`, a lease on each), POSTs up to
 * `concurrency` at once and records each outcome; when nothing is due it
 * sleeps until the next delivery falls due, and a new delivery or a
 * redelivery wakes it at once (NOTIFY on CALLBACK_DUE_CHANNEL, from any
 * process).
 *
 * It holds up to twice `concurrency` claimed deliveries, so the next batch is
 * claimed while half the current one still runs: one claim statement serves
 * several deliveries instead of a job fetch each.
 */
import type { CallbacksDeps as Deps } from './ports.js';
import {
  attemptClaimed, CALLBACK_DUE_CHANNEL, claimDue, nextDueAt, refreshStaleStatistics, releaseClaims, type ClaimedDelivery,
} from './delivery.service.js';

export type DispatcherOptions = {
  /** POSTs in flight at once. */
  concurrency: number;
  /**
   * The longest it sleeps without a wake-up (a safety net: a NOTIFY lost with its connection is
   * followed by a reconnect, which also wakes it), and the pause after a claim that found due
   * deliveries all waiting behind their subject's earlier callback (those are woken by that
   * callback's outcome).
   */
  maxSleepMs?: number;
  minSleepMs?: number;
  /** How often it looks whether a burst of deliveries has made the table's statistics stale. */
  statisticsEveryMs?: number;
};

export type CallbackDispatcher = {
  /** Look for due deliveries now. */
  wake(): void;
  /** Stop claiming, wait for the POSTs in flight, hand back the claims not started. */
  stop(): Promise<void>;
};

export async function startCallbackDispatcher(deps: Deps, options: DispatcherOptions): Promise<CallbackDispatcher> {
  const { concurrency, maxSleepMs = 5_000, minSleepMs = 200, statisticsEveryMs = 10_000 } = options;
  const waiting: ClaimedDelivery[] = [];
  const running = new Set<Promise<void>>();
  /** The claiming run in progress (one at a time; a wake-up during it asks for another pass). */
  let claimRun: Promise<void> | null = null;
  let again = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const start = (delivery: ClaimedDelivery) => {
    const attempt: Promise<void> = attemptClaimed(deps, delivery)
      .then(() => undefined)
      .catch((error: unknown) => deps.log.warn({ err: error, deliveryId: delivery.id, component: 'callbacks' }, 'a callback attempt failed; its lease will run out and it is attempted again'))
      .finally(() => {
        running.delete(attempt);
        startWaiting();
        wake();
      });
    running.add(attempt);
  };
  const startWaiting = () => {
    while (!stopping && running.size < concurrency && waiting.length > 0) start(waiting.shift()!);
  };

  /** Claim while there is room and something due; then sleep until the next due time. */
  const fill = async () => {
    let foundNone = false;
    // Claim again only when at most `concurrency` are held: the batch is then large enough to share.
    while (!stopping && running.size + waiting.length <= concurrency) {
      const room = 2 * concurrency - running.size - waiting.length;
      const claimed = await claimDue(deps, room);
      waiting.push(...claimed);
      startWaiting();
      foundNone = claimed.length === 0;
      if (claimed.length < room) break;
    }
    if (stopping || running.size + waiting.length > concurrency) return;
    const next = await nextDueAt(deps);
    const untilNext = next === null ? maxSleepMs : next.getTime() - deps.now().getTime();
    const sleep = Math.min(maxSleepMs, Math.max(foundNone ? minSleepMs : 0, untilNext));
    clearTimeout(timer);
    timer = setTimeout(wake, sleep);
  };

  function wake() {
    if (stopping) return;
    if (claimRun) {
      again = true;
      return;
    }
    claimRun = (async () => {
      try {
        do {
          again = false;
          await fill();
        } while (again && !stopping);
      } catch (error) {
        deps.log.warn({ err: error, component: 'callbacks' }, 'claiming due callbacks failed; trying again in a second');
        clearTimeout(timer);
        if (!stopping) timer = setTimeout(wake, 1_000);
      } finally {
        claimRun = null;
      }
    })();
  }

  // Woken at once by a new delivery anywhere, and on every (re)connect of the listening connection.
  const { unlisten } = await deps.database.sql.listen(CALLBACK_DUE_CHANNEL, wake, wake);
  wake();

  // A burst of deliveries after a quiet time (or a backlog found at start): the claim's plan needs
  // statistics that know them. Started once listening succeeded, so a failed start leaves no timer.
  let analyzing: Promise<unknown> = Promise.resolve();
  const refreshStatistics = () => {
    analyzing = refreshStaleStatistics(deps).catch((error: unknown) =>
      deps.log.warn({ err: error, component: 'callbacks' }, 'analyzing callback_deliveries failed'),
    );
  };
  refreshStatistics();
  const statistics = setInterval(refreshStatistics, statisticsEveryMs);
  statistics.unref();

  return {
    wake,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      clearInterval(statistics);
      await analyzing;
      await unlisten().catch(() => {});
      await claimRun;
      const unstarted = waiting.splice(0);
      await Promise.all([...running, releaseClaims(deps, unstarted.map((d) => d.id))]);
    },
  };
}
