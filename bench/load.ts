/**
 * Load generators: a closed loop of `connections` keep-alive sockets for HTTP
 * at full speed, autocannon (as a library) for HTTP at a fixed overall rate,
 * undici for evenly paced HTTP, and a closed loop of `connections` concurrent
 * callers for a database operation. All report the same shape: completed
 * operations per second, latency percentiles from every single response (not
 * autocannon's histogram, which has no p95 and, with a fixed rate, adds a
 * synthetic 1 ms-interval correction), errors.
 */
import autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { Pool } from 'undici';
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

/** How long the HTTP closed loop waits for the answers still out when its time is up, as autocannon's `timeout: 10`. */
const HTTP_ANSWER_TIMEOUT_MS = 10_000;

/**
 * Full-speed HTTP: `connections` keep-alive sockets, each sending its next request as soon as the
 * previous one is answered, for `durationS`. It does at full speed what autocannon did here with a
 * request built per request, for ~40% less of the machine's CPU a request (autocannon parses answers
 * with a JavaScript HTTP parser and copies its request template every time): on 2 vCPUs shared with
 * Kassa and PostgreSQL, what the load generator spends is taken from what it measures, and the raw
 * limits' postgres.js callers cost about as little (docs/performance-history.md, twentieth round).
 */
export async function runHttpClosedLoop(load: Omit<HttpLoad, 'overallRate'>): Promise<LoadResult> {
  const { hostname, port, host } = new URL(load.url);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const end = started + load.durationS * 1000;
  const sockets = new Set<Socket>();
  const timeout = setTimeout(() => {
    for (const socket of sockets) socket.destroy(new Error(`no answer ${HTTP_ANSWER_TIMEOUT_MS} ms after the phase ended`));
  }, load.durationS * 1000 + HTTP_ANSWER_TIMEOUT_MS);
  /** What was received that is not a response this loop can read: the run fails with it. */
  let unreadable: Error | null = null;
  /** One connection's loop; a socket that closes or fails with a request out counts an error, and is opened again while there is time. */
  const connection = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname);
      sockets.add(socket);
      socket.setNoDelay(true);
      let received: Buffer | null = null;
      let sentAt = 0;
      let waiting = false;
      const send = () => {
        if (performance.now() >= end || unreadable) return void socket.end();
        const { body, headers } = load.build();
        waiting = true;
        sentAt = performance.now();
        socket.write(requestBytes({ method: load.method, path: load.path, host, headers, ...(body !== undefined ? { body } : {}) }));
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        received = received ? Buffer.concat([received, chunk]) : chunk;
        let statuses: number[];
        try {
          const taken = takeResponses(received);
          statuses = taken.statuses;
          received = taken.rest.length ? taken.rest : null;
        } catch (error) {
          unreadable = error as Error;
          return void socket.destroy();
        }
        for (const status of statuses) {
          waiting = false;
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          if (status >= 200 && status < 300) {
            ok++;
            latencies.push(performance.now() - sentAt);
          } else errors++;
        }
        if (statuses.length && !waiting) send();
      });
      socket.on('error', () => {});
      socket.on('close', (hadError) => {
        sockets.delete(socket);
        const failed = waiting || hadError;
        if (failed) errors++;
        // Again after a pause, so a refused connection is not retried in a tight loop.
        if (failed && !unreadable && performance.now() < end) void sleep(10).then(connection).then(resolve);
        else resolve();
      });
    });
  try {
    await Promise.all(Array.from({ length: load.connections }, connection));
  } finally {
    clearTimeout(timeout);
  }
  if (unreadable) throw unreadable;
  const elapsed = (performance.now() - started) / 1000;
  return { rps: ok / elapsed, ok, errors, durationS: elapsed, statusCodes, generatorCpuMs: generatorCpu(cpu, ok), ...percentiles(latencies) };
}

/** `connections` concurrent loops calling `operation` for `durationS`. */
export async function runClosedLoop(operation: (i: number) => Promise<unknown>, connections: number, durationS: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let errors = 0;
  let counter = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const end = started + durationS * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await operation(counter++);
        latencies.push(performance.now() - t);
        ok++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  return { rps: ok / elapsed, ok, errors, durationS: elapsed, statusCodes: {}, generatorCpuMs: generatorCpu(cpu, ok), ...percentiles(latencies) };
}

/**
 * Open-loop load at a steady `rate` (requests evenly spaced, 1/rate apart) over
 * a keep-alive pool of `connections` sockets (undici). Latency counts from the
 * moment each request was due, so a request that waits for a free socket is
 * charged for the wait (no coordinated omission).
 */
export async function runPaced(
  load: Omit<HttpLoad, 'overallRate'> & { rate: number; slowMs?: number },
): Promise<LoadResult & { slowDueAt: number[] }> {
  const pool = new Pool(load.url, { connections: load.connections, pipelining: 1 });
  const latencies: number[] = [];
  /** When each request slower than `slowMs` was due (performance.now()), to set beside what the machine did then. */
  const slowDueAt: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  const interval = 1000 / load.rate;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const end = started + load.durationS * 1000;
  const inFlight = new Set<Promise<void>>();
  try {
    for (let i = 0; ; i++) {
      const due = started + i * interval;
      if (due >= end) break;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const { body, headers } = load.build();
      const request = pool
        .request({ method: load.method, path: load.path, headers, ...(body !== undefined ? { body } : {}) })
        .then(async (res) => {
          await res.body.dump();
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1;
          if (res.statusCode >= 200 && res.statusCode < 300) {
            ok++;
            const latency = performance.now() - due;
            latencies.push(latency);
            if (load.slowMs !== undefined && latency > load.slowMs) slowDueAt.push(due);
          } else errors++;
        })
        .catch(() => {
          errors++;
        });
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  return { rps: ok / elapsed, ok, errors, durationS: elapsed, statusCodes, generatorCpuMs: generatorCpu(cpu, ok), ...percentiles(latencies), slowDueAt };
}
