/**
 * Outbound callback HTTP (CONTRACT §6, SSRF safety): private destinations
 * refused (IP literals up front, names after DNS at connect time), no
 * redirects followed, a bounded wait and a bounded read. Real local HTTP
 * receivers; each test counts what the receiver actually saw.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackSender, isPrivateAddress } from '../../../server/adapters/callbacks/http-transport.js';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1',
  ])('%s is private', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700::1111'])('%s is public', (ip) => expect(isPrivateAddress(ip)).toBe(false));

  it.each(['::ffff:7f00:1', '::ffff:a01:203', '64:ff9b::7f00:1', '::', 'ff02::1', '224.0.0.1'])('%s (mapped, NAT64, unspecified, multicast) is private', (ip) =>
    expect(isPrivateAddress(ip)).toBe(true));

  it('treats a non-IP string as private (fail closed)', () => {
    expect(isPrivateAddress('example.com')).toBe(true);
  });
});

type Hit = { path: string; method: string };
let server: Server;
let port: number;
const hits: Hit[] = [];
const handlers = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
let streamed = { bytes: 0, finished: false, closed: false };

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push({ path: req.url ?? '', method: req.method ?? '' });
    const handler = handlers.get(req.url ?? '');
    if (handler) handler(req, res);
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  // '::' accepts both IPv6 (::1) and IPv4 (127.0.0.1) on a dual-stack host.
  await new Promise<void>((r) => server.listen(0, '::', () => r()));
  port = (server.address() as { port: number }).port;

  handlers.set('/redirect', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end());
  handlers.set('/trickle', (_req, res) => {
    // headers at once, then one byte every 50 ms, never finishing
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('.'), 50);
    res.on('close', () => clearInterval(timer));
  });
  handlers.set('/never', () => {
    /* never answers */
  });
  handlers.set('/huge', (_req, res) => {
    // 10 MB in 64 KiB chunks, paced, honouring backpressure; stops when the client goes away.
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const total = 10 * 1024 * 1024;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
    res.on('close', () => {
      streamed.closed = true;
      streamed.finished = res.writableFinished;
    });
    const pump = async () => {
      while (streamed.bytes < total && !res.destroyed) {
        const ok = res.write(chunk);
        streamed.bytes += chunk.length;
        if (!ok) await new Promise((r) => res.once('drain', r).once('close', r));
        await new Promise((r) => setTimeout(r, 2));
      }
      if (!res.destroyed) res.end();
    };
    void pump();
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const send = (sender: CallbackSender, url: string) => sender.post(url, '{"status":"COMPLETED"}', { 'content-type': 'application/json' });

describe('CallbackSender with private destinations refused', () => {
  const strict = new CallbackSender({ timeoutMs: 2000, allowPrivate: false });
  const lax = new CallbackSender({ timeoutMs: 2000, allowPrivate: true });
  afterAll(async () => {
    await strict.close();
    await lax.close();
  });

  it('the receiver is reachable at all three URLs when private destinations are allowed (control)', async () => {
    const before = hits.length;
    for (const url of [`http://127.0.0.1:${port}/lax`, `http://localhost:${port}/lax`, `http://[::1]:${port}/lax`]) {
      const r = await send(lax, url);
      expect(r.statusCode, url).toBe(200);
      expect(r.error).toBeNull();
    }
    expect(hits.length - before).toBe(3);
  });

  it.each([
    ['an IPv4 loopback literal', (p: number) => `http://127.0.0.1:${p}/strict`],
    ['a name resolving to loopback (checked after DNS, at connect time)', (p: number) => `http://localhost:${p}/strict`],
    ['an IPv6 loopback literal', (p: number) => `http://[::1]:${p}/strict`],
  ])('refuses %s without the receiver seeing a request', async (_what, url) => {
    const before = hits.length;
    const r = await send(strict, url(port));
    expect(r.statusCode).toBeNull();
    expect(r.error).toMatch(/private/i);
    expect(hits.length).toBe(before);
  });

  it.each([
    ['a decimal IPv4 host', (p: number) => `http://2130706433:${p}/strict`],
    ['a hex/short IPv4 host', (p: number) => `http://0x7f.1:${p}/strict`],
    ['an IPv4-mapped IPv6 literal', (p: number) => `http://[::ffff:127.0.0.1]:${p}/strict`],
  ])('refuses %s that means loopback', async (_what, url) => {
    const before = hits.length;
    const r = await send(strict, url(port));
    expect(r.statusCode).toBeNull();
    expect(r.error).toMatch(/private/i);
    expect(hits.length).toBe(before);
  });

  it('refuses non-http schemes and invalid URLs', async () => {
    expect((await send(strict, 'file:///etc/passwd')).error).toMatch(/http/);
    expect((await send(strict, 'not a url')).error).toMatch(/invalid/i);
  });
});

describe('CallbackSender bounds', () => {
  const sender = new CallbackSender({ timeoutMs: 300, allowPrivate: true });
  afterAll(() => sender.close());

  it('does not follow a 302: one request, a non-2xx result', async () => {
    const before = hits.length;
    const r = await send(sender, `http://127.0.0.1:${port}/redirect`);
    expect(r.statusCode).toBe(302);
    expect(r.error).toMatch(/302/);
    await new Promise((res) => setTimeout(res, 100));
    expect(hits.slice(before).map((h) => h.path)).toEqual(['/redirect']);
  });

  it('times out on a receiver that never answers (timeoutMs 300)', async () => {
    const started = Date.now();
    const r = await send(sender, `http://127.0.0.1:${port}/never`);
    const took = Date.now() - started;
    expect(r.statusCode).toBeNull();
    expect(r.error).toMatch(/timeout/i);
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2000);
    expect(r.latencyMs).toBeGreaterThanOrEqual(250);
  });

  it('bounds a 2xx whose body trickles forever by the same timeout', async () => {
    const started = Date.now();
    const r = await send(sender, `http://127.0.0.1:${port}/trickle`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.latencyMs).toBeLessThan(2000);
  });

  it('reports a refused connection as an error without a status code', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const r = await send(sender, `http://127.0.0.1:${closedPort}/`);
    expect(r.statusCode).toBeNull();
    expect(r.error).toMatch(/ECONNREFUSED|refused/i);
  });

  it('reads at most 64 KiB of a huge answer: the call returns and the 10 MB stream is cut off', async () => {
    streamed = { bytes: 0, finished: false, closed: false };
    const big = new CallbackSender({ timeoutMs: 5000, allowPrivate: true });
    try {
      const r = await send(big, `http://127.0.0.1:${port}/huge`);
      expect(r.statusCode).toBe(200);
      expect(r.error).toBeNull();
      // the server notices the client went away long before it could send 10 MB
      const deadline = Date.now() + 3000;
      while (!streamed.closed && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
      expect(streamed.closed).toBe(true);
      expect(streamed.finished).toBe(false);
      expect(streamed.bytes).toBeLessThan(10 * 1024 * 1024);
    } finally {
      await big.close();
    }
  });
});
