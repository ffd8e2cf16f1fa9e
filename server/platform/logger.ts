/**
 * One pino logger per process, shared by the HTTP server and the job worker,
 * so a failed job is as visible as a failed request.
 */
import { pino, type Logger as Pino } from 'pino';
import { Logger as WorkerLogger, type LogLevel } from 'graphile-worker';
import { Counter } from 'prom-client';

export type Log = Pino;

/** Headers that can carry a credential are never logged, wherever they appear. */
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'];

/**
 * A checkout token is the end user's key to their payment (whoever holds it sees the payment and
 * may choose its currency): it is in the page's path and in the checkout API's `input` query, so
 * those parts of a URL are masked before it is logged.
 */
export function maskCheckoutTokens(url: string): string {
  return url.replace(/^(\/checkout\/api\/[^?]*)\?.*$/, '$1?…').replace(/^\/checkout\/(?!api(?:\/|$))[^/?#]+/, '/checkout/…');
}

/** Fastify's request serializer (method, url, host, client address), with the URL masked. */
const serializers = {
  req: (req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
    method: req.method,
    url: req.url === undefined ? undefined : maskCheckoutTokens(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
};

/**
 * Where a process's log goes by default: stdout, through a 4 KiB buffer written when full and at
 * least every 500 ms, and synchronously at exit (pino's exit hook). Pino's own default writes each
 * line on its own through libuv's thread pool: to a pipe read by another process (as under systemd
 * or docker), ~60 µs of CPU a line on the 2-vCPU machine against ~18 µs buffered, where a whole
 * create costs ~300 µs and writes one access line (edges/access-log.ts). A SIGKILL loses at most
 * the last 500 ms of lines; the database, not the log, is the record of what happened.
 *
 * The buffer holds at most `MAX_BUFFERED_BYTES`. When nothing reads stdout (a log shipper stuck, a
 * terminal paused), lines beyond it are dropped and counted rather than kept: keeping them would
 * grow the process until it is killed, and writing them synchronously would stop every payment
 * with the log. The first line written once stdout drains again says how many were lost.
 */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const STDOUT = { dest: 1, sync: false, minLength: 4096, periodicFlush: 500 };

/** Lines dropped because stdout was not read (this process); `edges/rest/metrics.ts` adds it to each server's registry. */
export const droppedLogLines = new Counter({
  name: 'kassa_log_lines_dropped_total',
  help: 'Log lines dropped because stdout was not read and the log buffer was full (this process)',
  registers: [],
});

export type LoggerOptions = {
  /** Write here instead of stdout (tests). */
  stream?: NodeJS.WritableStream;
  /** The most bytes held for stdout while it is not read (`MAX_BUFFERED_BYTES`). */
  maxBufferedBytes?: number;
};

/** Counts the lines `destination` drops, and once it can write again has `log` say how many. */
function reportDrops(destination: ReturnType<typeof pino.destination>, log: Log): void {
  let dropped = 0;
  destination.on('drop', () => {
    dropped++;
    droppedLogLines.inc();
  });
  destination.on('write', () => {
    if (dropped === 0) return;
    const lines = dropped;
    dropped = 0;
    // After this write's own bookkeeping: the destination is still settling it while it emits.
    process.nextTick(() => log.warn({ droppedLines: lines }, 'log lines dropped: stdout was not read and the log buffer was full'));
  });
}

export function createLogger(level: string, options: LoggerOptions = {}): Log {
  const settings = { level, redact: REDACT, serializers };
  if (options.stream || level === 'silent') {
    // A silent logger writes nothing, so it gets no buffer and no flush timer.
    return pino(settings, options.stream as pino.DestinationStream | undefined);
  }
  // stdout, buffered and bounded as above.
  const destination = pino.destination({ ...STDOUT, maxLength: options.maxBufferedBytes ?? MAX_BUFFERED_BYTES });
  const log = pino(settings, destination);
  reportDrops(destination, log);
  return log;
}

/** Writes out what the log holds (before a banner goes to stdout, so the two keep their order). */
export function flushLog(log: Log): Promise<void> {
  return new Promise((resolve) => log.flush(() => resolve()));
}

const LEVELS: Record<LogLevel, 'error' | 'warn' | 'info' | 'debug'> = { error: 'error', warning: 'warn', info: 'info', debug: 'debug' };

type JobMeta = { job?: { id: string; task_identifier: string; attempts: number; max_attempts: number }; error?: unknown };

/**
 * graphile-worker's logger on top of Kassa's: a task failure is logged with
 * its task name, job id, attempt and error as fields, not only in the text.
 */
export function workerLogger(log: Log): WorkerLogger {
  const worker = log.child({ component: 'worker' });
  return new WorkerLogger((scope) => {
    const scoped = scope.taskIdentifier || scope.jobId ? worker.child({ task: scope.taskIdentifier, jobId: scope.jobId }) : worker;
    return (level, message, meta) => {
      const { job, error } = (meta ?? {}) as JobMeta;
      const fields = {
        ...(job ? { task: job.task_identifier, jobId: job.id, attempt: job.attempts, maxAttempts: job.max_attempts } : {}),
        ...(error !== undefined ? { err: error } : {}),
      };
      scoped[LEVELS[level]](fields, message);
    };
  });
}
