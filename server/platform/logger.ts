/**
 * One pino logger per process, shared by the HTTP server and the job worker,
 * so a failed job is as visible as a failed request.
 */
import { pino, type Logger as Pino } from 'pino';
import { Logger as WorkerLogger, type LogLevel } from 'graphile-worker';

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

export function createLogger(level: string, options: { stream?: NodeJS.WritableStream } = {}): Log {
  return pino({ level, redact: REDACT, serializers }, options.stream as pino.DestinationStream | undefined);
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
