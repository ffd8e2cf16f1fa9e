/**
 * A provider that caps `eth_getLogs` ranges below the configured cap (as
 * hosted RPCs do, answering a JSON-RPC error): the scanner halves refused
 * ranges until they pass, and finds every token transfer. The provider is a
 * local proxy speaking JSON-RPC in front of a real anvil.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, type Hex, type WalletClient } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEvmClient } from '../../../server/adapters/chain/evm/rpc.js';
import { EvmScanner } from '../../../server/adapters/chain/evm/scanner.js';
import type { DepositReport } from '../../../server/adapters/chain/evm/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { ANVIL_MNEMONIC, startAnvil, type Anvil } from './anvil.js';
import { deployTestToken } from './erc20.js';

const MAX_RANGE = 4n;
let anvil: Anvil;
let database: TestDatabase;
let proxy: Server;
let proxyUrl: string;
let wallet: WalletClient;
const accepted: bigint[] = [];
let refused = 0;

beforeAll(async () => {
  [anvil, database] = await Promise.all([startAnvil(), createTestDatabase()]);
  wallet = createWalletClient({ account: mnemonicToAccount(ANVIL_MNEMONIC), transport: http(anvil.url) });
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string; params: Array<{ fromBlock: Hex; toBlock: Hex }> };
    if (body.method === 'eth_getLogs') {
      const range = BigInt(body.params[0]!.toBlock) - BigInt(body.params[0]!.fromBlock) + 1n;
      if (range > MAX_RANGE) {
        refused++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32602, message: `block range too large: ${range} > ${MAX_RANGE}` } }));
        return;
      }
      accepted.push(range);
    }
    const upstream = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  await anvil?.stop();
  await database?.drop();
});

test('refused log ranges are halved until the provider accepts them; no transfer is missed', async () => {
  const token = await deployTestToken(wallet, anvil.client);
  const targets: Hex[] = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222', '0x3333333333333333333333333333333333333333'];
  const reports: DepositReport[] = [];
  const scanner = new EvmScanner({
    sql: database.sql, network: 'ETH', client: createEvmClient(proxyUrl, { retryCount: 0 }),
    watched: new Set(targets.map((t) => t.toLowerCase())), tokens: [{ currency: 'USDT', address: token.address }],
    confirmations: 1, sink: async (r) => void reports.push(r), logRangeCap: 50, blocksPerBatch: 50,
    startHeight: (await anvil.client.getBlockNumber()) + 1n,
  });
  await scanner.tick();
  const mint = async (to: Hex, value: bigint) =>
    anvil.mined(await wallet.writeContract({ account: wallet.account!, chain: null, address: token.address, abi: token.abi as never, functionName: 'mint', args: [to, value] } as never));
  await mint(targets[0]!, 1_000_000n);
  await anvil.mine(9);
  await mint(targets[1]!, 2_000_000n);
  await anvil.mine(20);
  await mint(targets[2]!, 3_000_000n);
  await scanner.tick();
  expect(reports.filter((r) => r.state === 'CONFIRMED').map((r) => `${r.toAddress} ${r.amount}`)).toEqual([
    `${targets[0]} 1`,
    `${targets[1]} 2`,
    `${targets[2]} 3`,
  ]);
  expect(refused).toBeGreaterThan(0);
  expect(accepted.every((range) => range <= MAX_RANGE)).toBe(true);
  // The accepted ranges cover the 32 scanned blocks exactly once.
  expect(accepted.reduce((a, b) => a + b, 0n)).toBe(32n);
});
