/**
 * The JSON-RPC client against a local HTTP double that answers the way Bitcoin Core does
 * (HTTP 500 with a JSON error body, 401 with an empty body, a node that never answers).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_TIMEOUT_MS, RPC_IN_FLIGHT, RpcClient, RpcError, RpcUnavailableError } from '../../../server/adapters/chain/utxo/rpc.js';

let server: Server;
let base: string;
const seen: { auth?: string; path?: string; body: { method: string; params: unknown[] } }[] = [];
/** Requests the double is answering right now, and the most at once. */
let atNode = 0;
let mostAtNode = 0;

/** The error a call fails with (a call that succeeds fails the test). */
async function failure(p: Promise<unknown>): Promise<RpcError & RpcUnavailableError> {
  try {
    await p;
  } catch (e) {
    return e as RpcError & RpcUnavailableError;
  }
  throw new Error('expected the call to fail');
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await read(req));
    seen.push({ auth: req.headers.authorization, path: req.url, body });
    if (req.headers.authorization !== `Basic ${Buffer.from('user:p@ss:w/rd').toString('base64')}`) {
      res.writeHead(401).end();
      return;
    }
    if (body.method === 'hang') return; // never answers
    if (body.method === 'slow') {
      mostAtNode = Math.max(mostAtNode, ++atNode);
      await new Promise((r) => setTimeout(r, Number(body.params[0])));
      atNode--;
    }
    if (body.method === 'getrawtransaction') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: null, error: { code: -5, message: 'No such mempool or blockchain transaction' }, id: body.id }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"result":{"value":0.10000000,"height":7},"error":null,"id":${body.id}}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('Core JSON-RPC client', () => {
  it('sends URL credentials as HTTP Basic auth and keeps amounts exact', async () => {
    const rpc = new RpcClient(`http://user:${encodeURIComponent('p@ss:w/rd')}@${base}/`);
    expect(await rpc.call('getblockchaininfo')).toEqual({ value: '0.10000000', height: 7 });
    expect(seen.at(-1)!.body).toMatchObject({ method: 'getblockchaininfo', params: [] });
    await rpc.withPath('/wallet/kassa').call('getbalance');
    expect(seen.at(-1)!.path).toBe('/wallet/kassa');
  });

  it('types a node error with its code', async () => {
    const rpc = new RpcClient(`http://user:${encodeURIComponent('p@ss:w/rd')}@${base}/`);
    const error = await failure(rpc.call('getrawtransaction', ['00'.repeat(32), true]));
    expect(error).toBeInstanceOf(RpcError);
    expect(error.code).toBe(-5);
  });

  it('types wrong credentials, timeouts and a refused connection as unavailable', async () => {
    const wrong = await failure(new RpcClient(`http://user:nope@${base}/`).call('getblockcount'));
    expect(wrong).toBeInstanceOf(RpcUnavailableError);
    expect([wrong.reason, wrong.status]).toEqual(['http', 401]);

    const slow = await failure(new RpcClient(`http://user:${encodeURIComponent('p@ss:w/rd')}@${base}/`, { timeoutMs: 200 }).call('hang'));
    expect(slow).toBeInstanceOf(RpcUnavailableError);
    expect(slow.reason).toBe('timeout');

    const refused = await failure(new RpcClient('http://u:p@127.0.0.1:1/').call('getblockcount'));
    expect(refused).toBeInstanceOf(RpcUnavailableError);
    expect(refused.reason).toBe('connection');
  });

  const url = () => `http://user:${encodeURIComponent('p@ss:w/rd')}@${base}/`;

  it('keeps at most RPC_IN_FLIGHT calls at the node, shared with its withPath clients', async () => {
    const rpc = new RpcClient(url(), { timeoutMs: 5_000 });
    const wallet = rpc.withPath('/wallet/kassa');
    mostAtNode = 0;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? rpc : wallet).call('slow', [50])));
    expect(answers).toHaveLength(12);
    expect(mostAtNode).toBe(RPC_IN_FLIGHT);
    // A client of its own takes turns of its own size.
    mostAtNode = 0;
    const one = new RpcClient(url(), { inFlight: 1 });
    await Promise.all(Array.from({ length: 3 }, () => one.call('slow', [10])));
    expect(mostAtNode).toBe(1);
  });

  it('the timeout of a call runs from its turn, not from when it was asked', async () => {
    // One at a time, 300 ms each: the fifth is sent 1,200 ms after it was asked, and answered 300 ms
    // later, inside its 1,000 ms (it would have timed out had the clock started when it was asked).
    // Each call has 700 ms to spare, so a machine busy with the rest of the suite does not fail it.
    const rpc = new RpcClient(url(), { timeoutMs: 1_000, inFlight: 1 });
    const started = performance.now();
    expect(await Promise.all(Array.from({ length: 5 }, () => rpc.call('slow', [300])))).toHaveLength(5);
    expect(performance.now() - started).toBeGreaterThan(1_000);
  });

  it('behind a node that stopped answering, the calls still waiting fail at once, not a timeout each; a call asked afterwards tries the node again', async () => {
    const rpc = new RpcClient(url(), { timeoutMs: 300 });
    const started = performance.now();
    const errors = await Promise.all(Array.from({ length: 12 }, () => failure(rpc.call('hang'))));
    const elapsed = performance.now() - started;
    // 4 at the node time out after 300 ms; the 8 behind them fail then, not in two more rounds (900 ms).
    expect(errors.every((e) => e instanceof RpcUnavailableError && e.reason === 'timeout')).toBe(true);
    const waited = errors.filter((e) => /another call failed while this one waited: hang: .*no answer in 300 ms/.test(e.message));
    expect(waited).toHaveLength(12 - RPC_IN_FLIGHT);
    expect(errors.filter((e) => !waited.includes(e)).map((e) => e.message)).toEqual(Array(RPC_IN_FLIGHT).fill('hang: node unavailable (timeout): no answer in 300 ms'));
    expect(elapsed).toBeLessThan(900);
    // Not a breaker: the next call is sent, and answered.
    expect(await rpc.call('getblockchaininfo')).toEqual({ value: '0.10000000', height: 7 });
  });

  it('one call the node does not answer, among calls it answers, fails alone', async () => {
    const rpc = new RpcClient(url(), { timeoutMs: 1_000, inFlight: 2 });
    const hung = failure(rpc.call('hang'));
    // The other slot keeps being answered while the hung call waits out its timeout, and after it
    // (50 calls of 25 ms: ~1,250 ms), each with 975 ms to spare.
    const started = performance.now();
    const others = await Promise.all(Array.from({ length: 50 }, () => rpc.call('slow', [25])));
    expect(others).toHaveLength(50);
    expect(performance.now() - started).toBeGreaterThan(1_000);
    expect((await hung).message).toBe('hang: node unavailable (timeout): no answer in 1000 ms');
  });

  it('a readiness probe goes to the node at once, not behind the queue', async () => {
    const rpc = new RpcClient(url(), { timeoutMs: 1_000 });
    const queued = Array.from({ length: 8 }, () => failure(rpc.call('hang')));
    const started = performance.now();
    expect(await rpc.probe('getblockcount')).toEqual({ value: '0.10000000', height: 7 });
    expect(performance.now() - started).toBeLessThan(900);
    await Promise.all(queued);
  });

  it("a readiness probe waits PROBE_TIMEOUT_MS (2 s), not a call's 15 s: a hung node shows as down within a readiness probe's or a scrape's time", async () => {
    const rpc = new RpcClient(url());
    expect(PROBE_TIMEOUT_MS).toBe(2000);
    expect((await failure(rpc.probe('hang'))).message).toBe(`hang: node unavailable (timeout): no answer in ${PROBE_TIMEOUT_MS} ms`);
  });
});
