/**
 * The RPC client: credentials in KASSA_<NET>_RPC_URL reach the node as Basic
 * auth (through a local authenticating proxy in front of a real anvil), and a
 * node that never answers fails the call within the timeout.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { clientFromEnv, createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { startAnvil, type Anvil } from './anvil.js';

let anvil: Anvil;
let proxy: Server;
let silent: Server;
const seenAuth: Array<string | undefined> = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  anvil = await startAnvil();
  const expected = `Basic ${Buffer.from('kassa:s3cr:t@').toString('base64')}`;
  proxy = createServer(async (req, res) => {
    seenAuth.push(req.headers.authorization);
    if (req.headers.authorization !== expected) {
      res.writeHead(401).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
  });
  // Accepts the connection, never answers.
  silent = createServer(() => {});
});

afterAll(async () => {
  await anvil?.stop();
  proxy?.closeAllConnections();
  silent?.closeAllConnections();
  await Promise.all([proxy, silent].map((s) => new Promise((r) => s?.close(r))));
});

test('credentials in the URL are sent as Basic auth, not in the URL', async () => {
  const port = await listen(proxy);
  const client = clientFromEnv({ KASSA_ETH_RPC_URL: `http://kassa:s3cr%3At%40@127.0.0.1:${port}` }, 'ETH', { retryCount: 0 });
  expect(await client!.getChainId()).toBe(31337);
  expect(seenAuth.at(-1)).toBe(`Basic ${Buffer.from('kassa:s3cr:t@').toString('base64')}`);
  const wrong = createEvmClient(`http://kassa:nope@127.0.0.1:${port}`, { retryCount: 0 });
  await expect(wrong.getChainId()).rejects.toThrow();
  expect(clientFromEnv({}, 'BSC')).toBeUndefined();
});

test('a node that does not answer fails the call within the timeout', async () => {
  const port = await listen(silent);
  const client = createEvmClient(`http://127.0.0.1:${port}`, { retryCount: 0, timeoutMs: 300 });
  const started = performance.now();
  await expect(client.getBlockNumber()).rejects.toThrow(/timed out|took too long/i);
  const elapsed = performance.now() - started;
  expect(elapsed).toBeGreaterThanOrEqual(250);
  // Far below viem's 10 s default even on a loaded machine.
  expect(elapsed).toBeLessThan(5_000);
});
