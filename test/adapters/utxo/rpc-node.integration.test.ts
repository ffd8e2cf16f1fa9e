/**
 * The JSON-RPC client against a real Litecoin Core regtest node with its default RPC server: 4
 * threads and a queue of 16 requests, past which the node answers HTTP 500 "Work queue depth
 * exceeded". A scanner's reorganisation walk-back asks for 20 block hashes at once, and a deposit
 * with many inputs one previous transaction per input: neither may overflow the node's queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { litecoindAvailable, startLitecoind, type Litecoind } from './litecoind.js';
import { RpcClient } from '../../../server/adapters/chain/utxo/rpc.js';

describe.skipIf(!litecoindAvailable())('Core JSON-RPC client on a real node', () => {
  let node: Litecoind;
  beforeAll(async () => {
    node = await startLitecoind();
    await node.mine(10);
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('200 calls at once all get their answer: the client keeps the node\'s work queue from overflowing', async () => {
    const rpc = node.rpc;
    const hashes = await Promise.all(Array.from({ length: 200 }, (_, i) => rpc.call<string>('getblockhash', [i % 11])));
    expect(hashes).toHaveLength(200);
    expect(new Set(hashes).size).toBe(11);
    expect(hashes.every((h) => /^[0-9a-f]{64}$/.test(h))).toBe(true);
    // Through another path of the same node too (that it shares the turns is shown on the HTTP double, rpc.integration).
    const mixed = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? rpc : rpc.withPath('/')).call<number>('getblockcount')));
    expect(new Set(mixed)).toEqual(new Set([10]));
    // And a client made afresh for the same node, as each role makes its own.
    const fresh = new RpcClient(node.url);
    expect(await Promise.all(Array.from({ length: 100 }, () => fresh.call<number>('getblockcount')))).toEqual(Array(100).fill(10));
  });
});
