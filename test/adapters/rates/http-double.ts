/**
 * A local HTTP double of a provider: a real node:http server on 127.0.0.1 (port 0) that answers
 * each request with whatever the test's handler says, in the provider's real wire format, and
 * records what it was asked.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type DoubleAnswer = {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
};

export type RecordedRequest = { method: string; url: string; headers: IncomingMessage['headers'] };

export type HttpDouble = {
  url: string;
  requests: RecordedRequest[];
  /** Replace the handler. */
  answer: (handler: (req: RecordedRequest) => DoubleAnswer) => void;
  close: () => Promise<void>;
};

export async function startHttpDouble(handler: (req: RecordedRequest) => DoubleAnswer = () => ({ status: 404 })): Promise<HttpDouble> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const recorded = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    requests.push(recorded);
    const a = current(recorded);
    const send = () => {
      const body = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status ?? 200, { 'content-type': typeof a.body === 'string' ? 'text/html' : 'application/json', ...a.headers });
      res.end(body);
    };
    if (a.delayMs) {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!res.destroyed) send();
      }, a.delayMs);
      timers.add(t);
    } else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (h) => {
      current = h;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
