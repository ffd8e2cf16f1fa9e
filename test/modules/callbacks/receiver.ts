/**
 * A real local HTTP receiver for callbacks: records every request (path,
 * headers, raw body, arrival time) and answers per path with a behaviour the
 * test sets (default: 200).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type Hit = { path: string; headers: IncomingHttpHeaders; body: string; at: number };
/** `n` is the 1-based number of this request on its path. */
export type Behaviour = (n: number, req: IncomingMessage, res: ServerResponse) => void;

export class Receiver {
  readonly hits: Hit[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly server: Server;
  private port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        this.hits.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const n = this.hitsFor(path).length;
        const behaviour = this.behaviours.get(path);
        if (behaviour) behaviour(n, req, res);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  hitsFor(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Headers as `verifyCallback` takes them. */
export const headersOf = (hit: Hit) => hit.headers as Record<string, string>;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
