/**
 * The bytes of HTTP/1.1 requests, and the complete responses at the front of what a keep-alive
 * socket has received (the keep-alive load generators, bench/load.ts). Pure: no sockets here.
 *
 * Only what the bench's servers answer is accepted: a status line and a Content-Length. A chunked or
 * close-delimited answer, or bytes that are not a response, throw, so the load generator fails loudly
 * instead of miscounting.
 */

export type HttpRequestParts = { method: 'GET' | 'POST'; path: string; host: string; headers: Record<string, string>; body?: string };

/** One request's bytes: the caller's headers, Host and (with a body) Content-Length, as autocannon and undici send them. */
export function requestBytes({ method, path, host, headers, body }: HttpRequestParts): string {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(name + value)) throw new Error(`header ${name} has a line break`);
    head += `${name}: ${value}\r\n`;
  }
  return body === undefined ? `${head}\r\n` : `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})[ \r]/;
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i;
const TRANSFER_ENCODING = /\r\ntransfer-encoding:/i;

export class UnexpectedResponseError extends Error {}

/**
 * The status codes of the complete responses at the front of `received`, and what is left over
 * (the start of a response still arriving).
 */
export function takeResponses(received: Buffer): { statuses: number[]; rest: Buffer } {
  const statuses: number[] = [];
  let at = 0;
  for (;;) {
    const headEnd = received.indexOf('\r\n\r\n', at, 'latin1');
    if (headEnd < 0) break;
    const head = received.toString('latin1', at, headEnd);
    const status = STATUS_LINE.exec(head);
    if (!status) throw new UnexpectedResponseError(`not an HTTP/1.1 status line: ${JSON.stringify(head.slice(0, 80))}`);
    if (TRANSFER_ENCODING.test(head)) throw new UnexpectedResponseError(`a response with Transfer-Encoding (only Content-Length is read): ${JSON.stringify(head.slice(0, 200))}`);
    const length = CONTENT_LENGTH.exec(head);
    if (!length) throw new UnexpectedResponseError(`a response without Content-Length: ${JSON.stringify(head.slice(0, 200))}`);
    const end = headEnd + 4 + Number(length[1]);
    if (received.length < end) break;
    statuses.push(Number(status[1]));
    at = end;
  }
  return { statuses, rest: at === 0 ? received : received.subarray(at) };
}
