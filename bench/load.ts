/**
 * Load generators: `connections` keep-alive sockets for HTTP at full speed
 * (a closed loop) and evenly paced (an open loop), autocannon (as a library)
 * for HTTP at a fixed overall rate, and a closed loop of `connections`
 * concurrent callers for a database operation. All report the same shape: completed
 * operations per second, latency percentiles from every single response (not
 * autocannon's histogram, which has no p95 and, with a fixed rate, adds a
 * synthetic 1 ms-interval correction), errors.
 */
import autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { requestBytes, takeResponses } from './http-responses.js';
import { percentiles, sleep, type Percentiles } from './stats.js';

export type LoadResult = Percentiles & {
  /** Completed operations (2xx for HTTP) per second. */
  rps: number;
  ok: number;
  /** Non-2xx answers plus socket errors and timeouts. */
  errors: number;
  durationS: number;
  statusCodes: Record<string, number>;
  /** The load generator's own CPU (this process, user + system) per completed operation, ms. */
  generatorCpuMs: number;
};

/** This process's CPU (ms) since `start`, per completed operation. */
const generatorCpu = (start: NodeJS.CpuUsage, ok: number) => {
  const used = process.cpuUsage(start);
  return ok ? (used.user + used.system) / 1000 / ok : 0;
};

export type HttpLoad = {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  connections: number;
  durationS: number;
  /** Total requests per second over all connections (autocannon `overallRate`); unlimited when absent. */
  overallRate?: number;
  /** Builds the body and headers of every request (unique ids, a fresh signature). */
  build: () => { body?: string; headers: Record<string, string> };
};

export function runAutocannon(load: HttpLoad): Promise<LoadResult> {
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: load.url,
        connections: load.overallRate ? Math.max(1, Math.min(load.connections, Math.floor(load.overallRate))) : load.connections,
        duration: load.durationS,
        // autocannon gives each connection its share of the rate; a share of 0 would mean unlimited.
        ...(load.overallRate ? { overallRate: load.overallRate, ignoreCoordinatedOmission: true } : {}),
        timeout: 10,
        requests: [
          {
            method: load.method,
            path: load.path,
            setupRequest: (request) => {
              const { body, headers } = load.build();
              return { ...request, method: load.method, path: load.path, headers: { ...request.headers, ...headers }, ...(body !== undefined ? { body } : {}) };
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error as Error);
        const codes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) codes[code] = stat.count ?? 0;
        const ok = result['2xx'];
        resolve({
          rps: ok / result.duration,
          ok,
          errors: result.non2xx + result.errors,
          durationS: result.duration,
          statusCodes: codes,
          generatorCpuMs: generatorCpu(cpu, ok),
          ...percentiles(latencies),
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** How long the HTTP runs wait for the answers still out when their time is up, as autocannon's `timeout: 10`. */
const HTTP_ANSWER_TIMEOUT_MS = 10_000;

/** A request's outcome: its status, or null when the connection closed or failed before the answer. */
type Answer = (status: number | null) => void;

/**
 * One keep-alive HTTP/1.1 connection carrying one request at a time, answers read by
 * bench/http-responses.ts. Bytes it cannot read go to `unreadable` and close it.
 */
class KeepAlive {
  private readonly socket: Socket;
  private received: Buffer | null = null;
  private answer: Answer | null = null;
  /** Settles when the socket has closed, whether it was ended, dropped or refused. */
  readonly closed: Promise<void>;

  constructor(url: URL, unreadable: (error: Error) => void) {
    this.socket = connect(Number(url.port || 80), url.hostname);
    this.socket.setNoDelay(true);
    this.socket.on('error', () => {}); // the close that follows answers the request out with null
    this.socket.on('data', (chunk: Buffer) => {
      this.received = this.received ? Buffer.concat([this.received, chunk]) : chunk;
      let statuses: number[];
      try {
        const taken = takeResponses(this.received);
        statuses = taken.statuses;
        this.received = taken.rest.length ? taken.rest : null;
      } catch (error) {
        unreadable(error as Error);
        return void this.socket.destroy();
      }
      for (const status of statuses) this.settle(status);
    });
    this.closed = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.settle(null);
        resolve();
      }),
    );
  }

  /** Writes before the connection is up wait in the socket, as Node buffers them. */
  send(bytes: string, answer: Answer): void {
    this.answer = answer;
    this.socket.write(bytes);
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private settle(status: number | null): void {
    const answer = this.answer;
    this.answer = null;
    answer?.(status);
  }
}

/** The counters of a run (HTTP or database), and its result, timed from when it is made. */
function loadTally() {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const cpu = process.cpuUsage();
  const started = performance.now();
  const tally = {
    ok: 0,
    errors: 0,
    /** A completed operation begun at `since`; returns its latency. */
    done(since: number): number {
      tally.ok++;
      const latency = performance.now() - since;
      latencies.push(latency);
      return latency;
    },
    failed(): void {
      tally.errors++;
    },
    /** An HTTP answer (null: none came), counted by status: a 2xx is done, returning its latency; anything else failed (null). */
    answered(status: number | null, since: number): number | null {
      if (status !== null) statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (status === null || status < 200 || status >= 300) {
        tally.failed();
        return null;
      }
      return tally.done(since);
    },
    result(): LoadResult {
      const elapsed = (performance.now() - started) / 1000;
      return { rps: tally.ok / elapsed, ok: tally.ok, errors: tally.errors, durationS: elapsed, statusCodes, generatorCpuMs: generatorCpu(cpu, tally.ok), ...percentiles(latencies) };
    },
  };
  return tally;
}

/** A request's bytes from what `build` makes. */
const nextRequest = (load: Omit<HttpLoad, 'overallRate'>, host: string) => {
  const { body, headers } = load.build();
  return requestBytes({ method: load.method, path: load.path, host, headers, ...(body !== undefined ? { body } : {}) });
};

/**
 * Full-speed HTTP: `connections` keep-alive sockets, each sending its next request as soon as the
 * previous one is answered, for `durationS`. It does at full speed what autocannon did here with a
 * request built per request, for ~40% less of the machine's CPU a request (autocannon parses answers
 * with a JavaScript HTTP parser and copies its request template every time): on 2 vCPUs shared with
 * Kassa and PostgreSQL, what the load generator spends is taken from what it measures, and the raw
 * limits' postgres.js callers cost about as little (docs/performance-history.md, twentieth round).
 * A connection that closes or fails with a request out counts an error and is opened again.
 */
export async function runHttpClosedLoop(load: Omit<HttpLoad, 'overallRate'>): Promise<LoadResult> {
  const url = new URL(load.url);
  const tally = loadTally();
  const end = performance.now() + load.durationS * 1000;
  let unreadable: Error | null = null;
  const open = new Set<KeepAlive>();
  const timeout = setTimeout(() => open.forEach((c) => c.destroy()), load.durationS * 1000 + HTTP_ANSWER_TIMEOUT_MS);
  const loop = async () => {
    while (performance.now() < end && !unreadable) {
      const connection = new KeepAlive(url, (error) => (unreadable = error));
      open.add(connection);
      let failed = false;
      while (performance.now() < end && !unreadable) {
        const sentAt = performance.now();
        const status = await new Promise<number | null>((answer) => connection.send(nextRequest(load, url.host), answer));
        tally.answered(status, sentAt);
        if (status === null) {
          failed = true;
          break;
        }
      }
      connection.end();
      await connection.closed;
      open.delete(connection);
      if (failed) await sleep(10); // so a refused connection is not retried in a tight loop
    }
  };
  try {
    await Promise.all(Array.from({ length: load.connections }, loop));
  } finally {
    clearTimeout(timeout);
  }
  if (unreadable) throw unreadable;
  return tally.result();
}

/** `connections` concurrent loops calling `operation` for `durationS`. */
export async function runClosedLoop(operation: (i: number) => Promise<unknown>, connections: number, durationS: number): Promise<LoadResult> {
  const tally = loadTally();
  let counter = 0;
  const end = performance.now() + durationS * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await operation(counter++);
        tally.done(t);
      } catch {
        tally.failed();
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return tally.result();
}

export type PacedResult = LoadResult & {
  /** When each request slower than `slowMs` was due (performance.now()). */
  slowDueAt: number[];
  /** Requests that found every connection busy when due and waited in the generator for one (their wait counts in their latency). */
  queued: number;
  /** Of the requests slower than `slowMs`, those that had waited for a connection. */
  slowQueued: number;
};

/**
 * Open-loop load at a steady `rate` (requests evenly spaced, 1/rate apart) over `connections`
 * keep-alive sockets. Latency counts from the moment each request was due, so a request that waits
 * for a free socket is charged for the wait (no coordinated omission). The same connections as the
 * closed loop: undici's pool, used here before, cost the machine twice the CPU a request.
 */
export async function runPaced(
  load: Omit<HttpLoad, 'overallRate'> & { rate: number; slowMs?: number },
): Promise<PacedResult> {
  const url = new URL(load.url);
  const tally = loadTally();
  /** When each request slower than `slowMs` was due (performance.now()), to set beside what the machine did then. */
  const slowDueAt: number[] = [];
  let queued = 0;
  let slowQueued = 0;
  let unreadable: Error | null = null;
  const opened = () => new KeepAlive(url, (error) => (unreadable = error));
  const idle = Array.from({ length: load.connections }, opened);
  const all = new Set(idle);
  /** Due times of requests waiting for a free connection, oldest first. */
  const waiting: number[] = [];
  let out = 0;
  let allAnswered = () => {};
  const send = (connection: KeepAlive, due: number, waited: boolean) => {
    out++;
    connection.send(nextRequest(load, url.host), (status) => {
      out--;
      const latency = tally.answered(status, due);
      if (latency !== null && load.slowMs !== undefined && latency > load.slowMs) {
        slowDueAt.push(due);
        if (waited) slowQueued++;
      }
      let next = connection;
      if (status === null) {
        // A connection that died is replaced, so the pool keeps its size.
        all.delete(connection);
        next = opened();
        all.add(next);
      }
      const dueNext = waiting.shift();
      if (dueNext !== undefined) send(next, dueNext, true);
      else idle.push(next);
      if (out === 0 && waiting.length === 0) allAnswered();
    });
  };
  const interval = 1000 / load.rate;
  const started = performance.now();
  const end = started + load.durationS * 1000;
  for (let i = 0; !unreadable; i++) {
    const due = started + i * interval;
    if (due >= end) break;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const connection = idle.pop();
    if (connection) send(connection, due, false);
    else {
      queued++;
      waiting.push(due);
    }
  }
  const timeout = setTimeout(() => all.forEach((c) => c.destroy()), HTTP_ANSWER_TIMEOUT_MS);
  try {
    if (out > 0 || waiting.length > 0) await new Promise<void>((resolve) => (allAnswered = resolve));
  } finally {
    clearTimeout(timeout);
    all.forEach((c) => c.end());
    await Promise.all([...all].map((c) => c.closed));
  }
  if (unreadable) throw unreadable;
  return { ...tally.result(), slowDueAt, queued, slowQueued };
}
