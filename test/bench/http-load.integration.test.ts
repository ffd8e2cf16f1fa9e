/**
 * The bench's full-speed HTTP load generator: the response reader on its own (pure), and the closed
 * loop against a real local HTTP server that answers, refuses, closes and misbehaves on purpose.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { requestBytes, takeResponses, UnexpectedResponseError } from '../../bench/http-responses.js';
import { runHttpClosedLoop, runPaced } from '../../bench/load.js';

const answer = (status: number, body: string, extra = '') => `HTTP/1.1 ${status} X\r\ncontent-type: text/plain\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('takeResponses', () => {
  it('reads complete responses and keeps the start of the next one', () => {
    const bytes = Buffer.from(answer(200, '{"a":1}') + answer(404, 'nö') + 'HTTP/1.1 201 Created\r\ncontent-length: 5\r\n\r\nab');
    const { statuses, rest } = takeResponses(bytes);
    expect(statuses).toEqual([200, 404]);
    expect(rest.toString()).toBe('HTTP/1.1 201 Created\r\ncontent-length: 5\r\n\r\nab');
    expect(takeResponses(Buffer.concat([rest, Buffer.from('cde')])).statuses).toEqual([201]);
  });

  it('waits for a head or a body that is not all there, byte by byte', () => {
    const whole = Buffer.from(answer(200, 'x'.repeat(300), 'Content-Length-Extra: 1\r\n'));
    let received: Buffer = Buffer.alloc(0);
    const seen: number[] = [];
    for (const byte of whole) {
      const taken = takeResponses(Buffer.concat([received, Buffer.from([byte])]));
      seen.push(...taken.statuses);
      received = taken.rest;
    }
    expect(seen).toEqual([200]);
    expect(received.length).toBe(0);
  });

  it('refuses what it cannot count: chunked, no length, not HTTP', () => {
    expect(() => takeResponses(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'))).toThrow(UnexpectedResponseError);
    expect(() => takeResponses(Buffer.from('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nhello'))).toThrow(/without Content-Length/);
    expect(() => takeResponses(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow(/not an HTTP\/1.1 status line/);
  });

  it('writes a request with Host, the headers given and the body length in bytes', () => {
    expect(requestBytes({ method: 'POST', path: '/v1/payments', host: '127.0.0.1:3000', headers: { authorization: 'K a:b' }, body: '{"€":1}' })).toBe(
      'POST /v1/payments HTTP/1.1\r\nhost: 127.0.0.1:3000\r\nauthorization: K a:b\r\ncontent-length: 9\r\n\r\n{"€":1}',
    );
    expect(requestBytes({ method: 'GET', path: '/x', host: 'h', headers: {} })).toBe('GET /x HTTP/1.1\r\nhost: h\r\n\r\n');
    expect(() => requestBytes({ method: 'GET', path: '/x', host: 'h', headers: { a: 'b\r\nevil: 1' } })).toThrow(/line break/);
  });
});

describe('runHttpClosedLoop and runPaced against a real server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r) ?? r(undefined));
    server = undefined;
  });
  const serve = async (handle: (body: string, res: ServerResponse, n: number) => void) => {
    let n = 0;
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => handle(body, res, ++n));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  };

  it('sends each built request, counts 2xx as done and the rest as errors, by status', async () => {
    const bodies: string[] = [];
    const url = await serve((body, res, n) => {
      bodies.push(body);
      // Status and headers set before end(), so Node sends a Content-Length (writeHead() first would make it chunked).
      res.statusCode = n % 4 === 0 ? 409 : 200;
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    let built = 0;
    const result = await runHttpClosedLoop({ url, method: 'POST', path: '/v1/payments', connections: 3, durationS: 0.3, build: () => ({ body: JSON.stringify({ n: ++built }), headers: { 'content-type': 'application/json' } }) });
    expect(result.ok + result.errors).toBe(bodies.length);
    expect(result.statusCodes['409']).toBe(result.errors);
    expect(result.statusCodes['200']).toBe(result.ok);
    expect(result.errors).toBe(Math.floor(bodies.length / 4));
    expect(new Set(bodies).size).toBe(bodies.length); // a fresh body a request
    expect(result.ok).toBeGreaterThan(10);
    expect(result.p50).toBeGreaterThan(0);
    expect(result.rps).toBeCloseTo(result.ok / result.durationS, 6);
  });

  it('a connection the server drops mid-request counts one error and is opened again', async () => {
    const url = await serve((_body, res, n) => {
      if (n === 5) return void res.socket!.destroy();
      res.end('ok');
    });
    const result = await runHttpClosedLoop({ url, method: 'GET', path: '/', connections: 2, durationS: 0.3, build: () => ({ headers: {} }) });
    expect(result.errors).toBe(1);
    expect(result.ok).toBeGreaterThan(10);
  });

  it('fails the run on an answer it cannot read, instead of miscounting', async () => {
    const url = await serve((_body, res) => {
      res.writeHead(200); // no length: Node sends it chunked
      res.write('a');
      res.end('b');
    });
    await expect(runHttpClosedLoop({ url, method: 'GET', path: '/', connections: 2, durationS: 0.3, build: () => ({ headers: {} }) })).rejects.toThrow(/Transfer-Encoding/);
  });

  it('nobody listening: every attempt is an error, and the loop still ends on time', async () => {
    const url = await serve((_b, res) => res.end());
    await new Promise((r) => server!.close(r));
    server = undefined;
    // 1 s, not less: a refused connection is retried after 10 ms, and on a machine busy with the rest
    // of the suite one .ci/run saw the first refusals take 0.2 s to arrive, so 0.2 s held no retry.
    const result = await runHttpClosedLoop({ url, method: 'GET', path: '/', connections: 2, durationS: 1, build: () => ({ headers: {} }) });
    expect(result.ok).toBe(0);
    expect(result.errors).toBeGreaterThan(2); // each connection tried, and at least one tried again
    expect(result.durationS).toBeLessThan(5);
  });

  it('paced: one request every 1/rate, each answered once, latency from when it was due, the slow ones named', async () => {
    const seen: number[] = [];
    const url = await serve((body, res) => {
      const n = Number(JSON.parse(body).n);
      seen.push(n);
      // Every 10th answer waits 60 ms: with 2 connections the requests due meanwhile wait for a socket.
      setTimeout(() => res.end('{}'), n % 10 === 0 ? 60 : 0);
    });
    let built = 0;
    const started = performance.now();
    const result = await runPaced({ url, method: 'POST', path: '/', connections: 2, durationS: 0.5, rate: 100, slowMs: 40, build: () => ({ body: JSON.stringify({ n: ++built }), headers: {} }) });
    const finished = performance.now();
    expect(result.ok).toBe(50); // 100/s for 0.5 s
    expect(result.errors).toBe(0);
    expect(seen.toSorted((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // Requests 10, 20, … took 60 ms themselves: each is slow, due 90 ms apart.
    expect(result.slowDueAt.length).toBeGreaterThanOrEqual(5);
    // Due within the run (its schedule starts when runPaced does, which a busy machine can put
    // after `started`: one .ci/run had a slow request due later than started + 500 ms).
    expect(result.slowDueAt.every((due) => due >= started && due < finished)).toBe(true);
    expect(result.p99).toBeGreaterThan(40);
    expect(result.p50).toBeLessThan(40);
  });

  it('paced: counts the requests that waited for a free connection, and which slow ones had', async () => {
    // Each answer takes 30 ms. At 100/s, one connection cannot keep up: from the second request
    // on, each waits for the one before, and the wait grows past 40 ms. Over ten connections
    // (three answers in flight, a few more while a busy machine delays some) none waits.
    const url = await serve((_body, res) => void setTimeout(() => res.end('ok'), 30));
    const load = { url, method: 'GET', path: '/', durationS: 0.3, rate: 100, slowMs: 40, build: () => ({ headers: {} }) } as const;
    const one = await runPaced({ ...load, connections: 1 });
    expect(one.ok).toBe(30);
    expect(one.queued).toBe(29);
    expect(one.slowDueAt.length).toBeGreaterThan(20);
    // Every slow one had waited but, at most, the first: sent at once, it is slow too when a busy
    // machine (the suite's other files in parallel) delays its connection and answer past 40 ms.
    expect(one.slowQueued).toBeGreaterThan(20);
    expect(one.slowQueued).toBeGreaterThanOrEqual(one.slowDueAt.length - 1);
    const ten = await runPaced({ ...load, connections: 10 });
    expect(ten.ok).toBe(30);
    expect(ten.queued).toBe(0);
    expect(ten.slowQueued).toBe(0);
  });

  it('paced: a connection the server drops counts one error, and the pool keeps its size', async () => {
    const url = await serve((_body, res, n) => {
      if (n === 3) return void res.socket!.destroy();
      res.end('ok');
    });
    let connections = 0;
    server!.on('connection', () => connections++);
    const result = await runPaced({ url, method: 'GET', path: '/', connections: 2, durationS: 0.3, rate: 100, build: () => ({ headers: {} }) });
    expect(result.errors).toBe(1);
    expect(result.ok).toBe(29);
    expect(connections).toBe(3); // the two opened first, and the one that replaced the dropped one
  });
});
