/**
 * A real Litecoin Core regtest node for tests (Debian package `litecoind`, 0.21): temporary data
 * directory, free ports, `-txindex`, a node wallet "funder" that belongs to the test (never Kassa's
 * keys) to mine and to pay Kassa's addresses.
 *
 * Keep a test's chain below ~430 blocks: Litecoin 0.21 activates MWEB on regtest at 432 and
 * `generatetoaddress` then fails (bad-txns-vin-empty) until the wallet pegs in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../db/embedded.js';
import { RpcClient } from '../../../server/adapters/chain/utxo/rpc.js';
import { fromBaseUnits, toBaseUnits } from '../../../server/adapters/chain/utxo/amounts.js';

export const LITECOIND = process.env.KASSA_LITECOIND ?? '/usr/bin/litecoind';

/** Whether the node binary is here; when it is not, say how to get it, or fail when CI requires it. */
export function litecoindAvailable(): boolean {
  if (existsSync(LITECOIND)) return true;
  if (process.env.KASSA_REQUIRE_LITECOIND === '1') return true; // the start then fails loudly
  console.log(`litecoind not found at ${LITECOIND}: skipping the Litecoin regtest tests (install the Debian package \`litecoind\`; KASSA_REQUIRE_LITECOIND=1 makes this a failure)`);
  return false;
}

export type Litecoind = {
  /** RPC URL with credentials, as an operator would configure `KASSA_LTC_RPC_URL`. */
  url: string;
  rpc: RpcClient;
  /** The test's own wallet. */
  funder: RpcClient;
  funderAddress: string;
  mine(blocks: number): Promise<string[]>;
  /**
   * Mine to a fresh funder address: after `invalidateblock`, a block mined with the same content
   * in the same second would be the invalidated block again (and refused).
   */
  mineFork(blocks: number): Promise<string[]>;
  /** sendtoaddress from the funder wallet; returns the txid. */
  pay(address: string, amount: string): Promise<string>;
  stop(): Promise<void>;
};

/**
 * `replacement`: accept BIP-125 replacements in the mempool, as Bitcoin Core does by default
 * (Litecoin Core's default, `-mempoolreplacement=0`, refuses them).
 */
export async function startLitecoind(options: { replacement?: boolean } = {}): Promise<Litecoind> {
  const datadir = mkdtempSync(join(tmpdir(), 'kassa-ltc-'));
  const rpcPort = await freePort();
  const user = 'kassa';
  const password = 'p@ss:word';
  const child: ChildProcess = spawn(
    LITECOIND,
    [
      '-regtest',
      '-txindex',
      '-server',
      `-datadir=${datadir}`,
      `-rpcuser=${user}`,
      `-rpcpassword=${password}`,
      `-rpcport=${rpcPort}`,
      '-rpcbind=127.0.0.1',
      '-rpcallowip=127.0.0.1',
      '-listen=0',
      '-fallbackfee=0.0001',
      '-printtoconsole=0',
      '-disablewallet=0',
      // Creating a wallet derives its whole keypool: 1000 keys take >10 s when several nodes start
      // at once on two shared cores; the test wallet needs a handful.
      '-keypool=20',
      ...(options.replacement ? ['-mempoolreplacement=1'] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  let exited = false;
  child.on('exit', () => (exited = true));
  // Last resort if the test process ends without stop() (a hook timeout): take the node with it.
  const reap = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', reap);
  // A missing binary is an 'error' event, not an exit: report it as a failed start.
  child.on('error', (error) => {
    exited = true;
    stderr += `${error.message} (install the Debian package \`litecoind\`)`;
  });

  const url = `http://${user}:${encodeURIComponent(password)}@127.0.0.1:${rpcPort}/`;
  const rpc = new RpcClient(url, { timeoutMs: 60_000 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`litecoind exited at start: ${stderr}`);
    try {
      await rpc.call('getblockchaininfo');
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`litecoind did not answer RPC in 60 s: ${(error as Error).message} ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  let funder: RpcClient;
  let funderAddress: string;
  try {
    await rpc.call('createwallet', ['funder']);
    funder = rpc.withPath('/wallet/funder');
    funderAddress = await funder.call<string>('getnewaddress', ['', 'bech32']);
  } catch (error) {
    // Never leave a node behind a failed start.
    child.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
    throw error;
  }

  const stop = async () => {
    if (!exited) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await rpc.call('stop');
      } catch {
        child.kill('SIGTERM');
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    process.removeListener('exit', reap);
    rmSync(datadir, { recursive: true, force: true });
  };

  return {
    url,
    rpc,
    funder,
    funderAddress,
    mine: (blocks) => rpc.call<string[]>('generatetoaddress', [blocks, funderAddress]),
    mineFork: async (blocks) => rpc.call<string[]>('generatetoaddress', [blocks, await funder.call<string>('getnewaddress', ['', 'bech32'])]),
    pay: (address, amount) => funder.call<string>('sendtoaddress', [address, amount]),
    stop,
  };
}

/**
 * Double-spend `txid` (back in the mempool after `invalidateblock`): a transaction spending the same
 * inputs back to the funder, mined in one block on the current chain. Returns whether the wallet
 * signed it completely.
 */
export async function mineConflict(node: Litecoind, txid: string): Promise<boolean> {
  const raw = await node.rpc.call<{ vin: { txid: string; vout: number }[] }>('getrawtransaction', [txid, true]);
  let inputTotal = 0n;
  for (const vin of raw.vin) {
    const prev = await node.rpc.call<{ vout: { n: number; value: string }[] }>('getrawtransaction', [vin.txid, true]);
    inputTotal += toBaseUnits(prev.vout.find((o) => o.n === vin.vout)!.value);
  }
  const conflict = await node.funder.call<string>('createrawtransaction', [
    raw.vin.map((v) => ({ txid: v.txid, vout: v.vout })),
    { [node.funderAddress]: fromBaseUnits(inputTotal - 100_000n) },
  ]);
  const signed = await node.funder.call<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [conflict]);
  await node.rpc.call('generateblock', [node.funderAddress, [signed.hex]]);
  return signed.complete;
}
