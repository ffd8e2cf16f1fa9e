/**
 * Statements of concurrent requests gathered into one (DataLoader's batching).
 *
 * Under load each create was its own round trip and its own commit: a socket write and a parse in
 * Kassa, a receive, a plan, a commit and a send in PostgreSQL. A batch makes them one per batch
 * (bench scenario 1, alternating runs: 1,522 → 1,665 creates/s, PostgreSQL CPU 0.41 → 0.31 ms a
 * create). Callback outcomes are batched too, since the dispatcher (worker CPU 0.35 → 0.30 ms and
 * PostgreSQL CPU 0.38 → 0.29 ms a delivery, bench scenario 3), and so are the payment reads' stamp
 * checks (bench scenario 2: ratio 0.31–0.36 → 0.38–0.52; a read measured batched before it had its
 * cache, when its statement was the whole read, gained nothing).
 *
 * A batch is sent on the next turn of the event loop (`setImmediate`: after the requests read in
 * the same poll phase have reached it), or when `maxSize` items wait. While `maxInFlight` batches
 * are at the database, the next one keeps gathering instead of queueing behind them in the pool:
 * batches grow with the load and a lone request waits for nothing. With `pipelined`, a gathering
 * batch also goes once it is as large as the newest one out, so that on a connection of its own it
 * waits in the backend and the database does not wait for this process between two batches.
 */
import DataLoader from 'dataloader';
import { Histogram } from 'prom-client';

export type BatchOptions = {
  maxSize: number;
  maxInFlight: number;
  /**
   * Also let a gathered batch out while `maxInFlight` are at the database, once it carries as many
   * items as the newest batch out (up to `pipelined` batches out in all): on a pool of one
   * connection it then waits in the backend's socket and runs the moment the one ahead commits.
   */
  pipelined?: number;
  /** The `batch` label of this batcher's series in /metrics; an unnamed batcher is not measured. */
  name?: string;
};

/**
 * What batching does under the load of the moment, in this process: how many items a statement
 * carries, how long its round trip takes, and how long a gathered batch waited for an in-flight
 * one. A create's time in Kassa is mostly its batch's round trip (bench scenario 1 reports these
 * three). Not in a registry of their own: `edges/rest/metrics.ts` adds them to each server's.
 */
export const batchMetrics = {
  items: new Histogram({
    name: 'kassa_db_batch_items',
    help: 'Items per batched statement, by batcher (this process)',
    labelNames: ['batch'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [],
  }),
  seconds: new Histogram({
    name: 'kassa_db_batch_seconds',
    help: 'Round trip of a batched statement, from sent to answered (with any retry of its items one at a time), by batcher (this process)',
    labelNames: ['batch'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [],
  }),
  heldSeconds: new Histogram({
    name: 'kassa_db_batch_held_seconds',
    help: 'Time a gathered batch waited for an in-flight batch of its batcher to come back (0 when it went at once), by batcher (this process)',
    labelNames: ['batch'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [],
  }),
};

/** The three series of one batcher, labelled once (a label lookup per batch would hash the labels each time). */
function meter(name: string | undefined) {
  if (name === undefined) return null;
  return { items: batchMetrics.items.labels(name), seconds: batchMetrics.seconds.labels(name), held: batchMetrics.heldSeconds.labels(name) };
}

/**
 * `run(items)` answers each item in order. A batch that `run` refuses as a whole (one item
 * breaking a constraint of the statement) is run again an item at a time, so one request's error
 * never becomes its neighbours'.
 */
export function batched<In, Out>(run: (items: readonly In[]) => Promise<Out[]>, options: BatchOptions): (item: In) => Promise<Out> {
  // DataLoader fails one load for an Error in its place, and every load of a batch that throws.
  const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
  const runEach = async (items: readonly In[]): Promise<(Out | Error)[]> => {
    try {
      return await run(items);
    } catch (error) {
      if (items.length === 1) throw error;
      return Promise.all(items.map((item) => run([item]).then(([out]) => out as Out, asError)));
    }
  };
  const measured = meter(options.name);
  let inFlight = 0;
  /** Items of the newest batch let out. */
  let newestSize = 0;
  /** The batch gathering now: its items so far, and its send once it is held. */
  let gathering: { count: number; send: (() => void) | null } = { count: 0, send: null };
  const waiting: (() => void)[] = [];
  const release = () => {
    inFlight--;
    // With one let out behind it still out, the next goes only as large as that one (letOutIfFull).
    if (inFlight < options.maxInFlight) waiting.shift()?.();
    else letOutIfFull();
  };
  const loader = new DataLoader<In, Out>(
    async (items) => {
      inFlight++;
      newestSize = items.length;
      const sent = measured ? performance.now() : 0;
      try {
        return await runEach(items);
      } finally {
        // The next batch first: until it is sent the database waits, and every item of it with it.
        const back = measured ? performance.now() : 0;
        release();
        if (measured) {
          measured.items.observe(items.length);
          measured.seconds.observe((back - sent) / 1000);
        }
      }
    },
    {
      cache: false,
      maxBatchSize: options.maxSize,
      batchScheduleFn: (dispatch) => {
        const batch = { count: 0, send: null as (() => void) | null };
        gathering = batch;
        setImmediate(() => {
          /** Sends the batch, measured as held 0 or since the moment it began to wait. */
          const send = (heldSince?: number) => {
            const held = heldSince === undefined ? 0 : (performance.now() - heldSince) / 1000;
            dispatch();
            measured?.held.observe(held);
          };
          if (inFlight < options.maxInFlight) send();
          else {
            const heldSince = performance.now();
            const go = () => {
              batch.send = null;
              send(heldSince);
            };
            batch.send = go;
            waiting.push(go);
            letOutIfFull();
          }
        });
      },
    },
  );
  /** The held batch let out beside those at the database, once as large as the newest of them. */
  const letOutIfFull = () => {
    const held = gathering.send;
    if (held === null || !options.pipelined || inFlight >= options.pipelined || gathering.count < newestSize) return;
    waiting.splice(waiting.indexOf(held), 1);
    held();
  };
  return (item) => {
    const answer = loader.load(item);
    gathering.count++;
    letOutIfFull();
    return answer;
  };
}
