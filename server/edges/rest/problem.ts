/**
 * problem+json (RFC 9457) for every non-2xx answer (CONTRACT §3). Domain
 * errors carry their own status and code; framework errors are mapped to
 * stable codes here; anything unexpected becomes a bare 500 (or 503 when
 * the database is unreachable) with no stack trace or SQL.
 */
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { KassaError, type FieldError } from '../../platform/errors.js';

export const PROBLEM_TYPE_BASE = 'https://kassa.dev/problems/';

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors: FieldError[];
};

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 413: 'Payload Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type', 422: 'Unprocessable Content',
  431: 'Request Header Fields Too Large',
  429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

export function problem(status: number, code: string, detail: string, errors: FieldError[] = []): Problem {
  return {
    type: `${PROBLEM_TYPE_BASE}${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    errors,
  };
}

export function sendProblem(reply: FastifyReply, p: Problem, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(p.status).headers(headers).type('application/problem+json').send(p);
}

/** Framework error codes → (status, code, detail). */
const FASTIFY_ERRORS: Record<string, [number, string, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 64 KiB.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'MALFORMED_REQUEST', 'Content-Length does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'MALFORMED_JSON', 'The body is empty but declared as JSON.'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'MALFORMED_JSON', 'The body is not valid JSON.'],
  FST_ERR_BAD_URL: [400, 'MALFORMED_REQUEST', 'The URL is malformed.'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'URI_TOO_LONG', 'A path segment is too long.'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'MALFORMED_REQUEST', 'The request is malformed.'],
};

/** Connection-level failures of PostgreSQL: the service is unavailable, not broken. */
function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return (
    code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'CONNECT_TIMEOUT' || code === 'CONNECTION_CLOSED' ||
    code === 'CONNECTION_ENDED' || code === 'CONNECTION_DESTROYED' || code === '57P01' || code === '57P03'
  );
}

export function toProblem(error: unknown): { problem: Problem; headers: Record<string, string> } {
  if (error instanceof KassaError) {
    return { problem: problem(error.status, error.code, error.message, error.errors), headers: error.headers };
  }
  const fastifyError = error as Partial<FastifyError> & { cause?: unknown };
  const mapped = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (mapped) return { problem: problem(mapped[0], mapped[1], mapped[2]), headers: {} };
  if (error instanceof SyntaxError || (fastifyError.statusCode === 400 && fastifyError.message?.includes('JSON'))) {
    return { problem: problem(400, 'MALFORMED_JSON', 'The body is not valid JSON.'), headers: {} };
  }
  // Text PostgreSQL cannot store (a NUL byte, invalid encoding) that a schema let through.
  const sqlState = (fastifyError.cause as { code?: string } | undefined)?.code ?? fastifyError.code;
  if (sqlState === '22021' || sqlState === '22P05') {
    return { problem: problem(400, 'VALIDATION_FAILED', 'The request contains characters that cannot be stored.'), headers: {} };
  }
  if (isDatabaseUnavailable(error) || isDatabaseUnavailable(fastifyError.cause)) {
    return { problem: problem(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.'), headers: { 'retry-after': '5' } };
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return { problem: problem(status, 'BAD_REQUEST', 'The request could not be processed.'), headers: {} };
  }
  return { problem: problem(500, 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged.'), headers: {} };
}

/** For Fastify's `frameworkErrors`: router errors (bad URL encoding, overlong segments) before any route runs. */
export function frameworkErrors(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const { problem: p, headers } = toProblem(error);
  // helmet's hooks have not run for a request the router refused: the same headers, set here.
  void sendProblem(reply, p, { ...API_SECURITY_HEADERS, ...headers });
}

/**
 * For Fastify's `clientErrorHandler`: a request node's HTTP parser refuses before Fastify sees it (a
 * Content-Length that is not a number, both Content-Length and Transfer-Encoding, a bad chunk size,
 * headers over the limit). Written on the socket, as problem+json like every other refusal, then the
 * connection is closed: after a framing error the rest of its bytes cannot be read as requests.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const p =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? problem(431, 'HEADERS_TOO_LARGE', 'The request headers are larger than this server accepts.')
      : problem(400, 'MALFORMED_REQUEST', 'The request is not valid HTTP/1.1 (its framing: the request line, Content-Length, Transfer-Encoding or a chunk).');
  const body = JSON.stringify(p);
  const head = [
    `HTTP/1.1 ${p.status} ${p.title}`,
    'content-type: application/problem+json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(API_SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
  ];
  if (socket.writable) socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  else socket.destroy();
}

/**
 * helmet's defaults with a CSP for documents that load nothing: for responses sent before its
 * hooks run, and set as one constant on every JSON answer of the route table (route.ts), where
 * helmet rebuilding the same headers per request cost ~60 µs.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
};

/**
 * The methods each registered path answers, for a 405 with `Allow` (RFC 9110 §15.5.6) where a
 * client used the wrong method on a path that exists: `PUT /v1/payments` says to use POST or GET
 * instead of claiming the path is unknown. Only the not-found path reads it.
 */
class AllowedMethods {
  private readonly paths: { pattern: RegExp; methods: Set<string> }[] = [];

  add(url: string, methods: string | string[]): void {
    // ':param' matches one segment, '*' the rest; everything else literally.
    const source = url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}$`);
    let entry = this.paths.find((p) => p.pattern.source === pattern.source);
    if (!entry) this.paths.push((entry = { pattern, methods: new Set() }));
    for (const method of [methods].flat()) entry.methods.add(method.toUpperCase());
  }

  of(path: string): string[] {
    const methods = new Set<string>();
    for (const p of this.paths) if (p.pattern.test(path)) p.methods.forEach((m) => methods.add(m));
    return [...methods].sort();
  }
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const { problem: p, headers } = toProblem(error);
    if (p.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, p, headers);
  });
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.url, route.method));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const methods = allowed.of(path);
    // No route, so no route's headers: the JSON answers' constant set (helmet is only where documents are).
    if (methods.length > 0 && !methods.includes(request.method)) {
      return sendProblem(reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; use ${methods.join(', ')}.`), {
        ...API_SECURITY_HEADERS,
        allow: methods.join(', '),
      });
    }
    return sendProblem(reply, problem(404, 'NOT_FOUND', `No route ${request.method} ${path}.`), API_SECURITY_HEADERS);
  });
}
