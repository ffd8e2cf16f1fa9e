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
 * batches grow with the load and a lone request waits for nothing.
 */
import DataLoader from 'dataloader';

export type BatchOptions = { maxSize: number; maxInFlight: number };

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
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    inFlight--;
    waiting.shift()?.();
  };
  const loader = new DataLoader<In, Out>(
    async (items) => {
      inFlight++;
      try {
        return await runEach(items);
      } finally {
        release();
      }
    },
    {
      cache: false,
      maxBatchSize: options.maxSize,
      batchScheduleFn: (dispatch) =>
        setImmediate(() => {
          if (inFlight < options.maxInFlight) dispatch();
          else waiting.push(dispatch);
        }),
    },
  );
  return (item) => loader.load(item);
}
