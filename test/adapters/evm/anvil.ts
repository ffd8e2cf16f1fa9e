/**
 * A real anvil node for a test file: started on a free port (`--port 0`, the
 * port parsed from its "Listening on" line), stopped by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createPublicClient, http, type Hex, type PublicClient, type TransactionReceipt } from 'viem';

const BINARY = fileURLToPath(
  new URL('../../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil', import.meta.url),
);

/** anvil's default mnemonic: its accounts are pre-funded with 10,000 ETH each. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export type Anvil = {
  url: string;
  port: number;
  client: PublicClient;
  /** A raw JSON-RPC call, for anvil's own methods (`anvil_mine`, `anvil_reorg`, …). */
  rpc: <T = unknown>(method: string, params?: unknown[]) => Promise<T>;
  mine: (blocks?: number) => Promise<void>;
  snapshot: () => Promise<Hex>;
  revert: (id: Hex) => Promise<boolean>;
  setBalance: (address: Hex, wei: bigint) => Promise<void>;
  /**
   * The receipt, once mined. Automine answers eth_sendTransaction before the block exists, so a test
   * that reads the chain right after sending must wait for this first.
   */
  mined: (hash: Hex) => Promise<TransactionReceipt>;
  stop: () => Promise<void>;
};

/** `port` 0 (the default) lets anvil pick a free one; a fixed port is for restarting a node where it was. */
export async function startAnvil(args: string[] = [], port = 0): Promise<Anvil> {
  const child = spawn(BINARY, ['--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const listening = await listeningPort(child);
  const url = `http://127.0.0.1:${listening}`;
  const client = createPublicClient({ transport: http(url, { retryCount: 0 }), cacheTime: 0 }) as PublicClient;
  let id = 0;
  const rpc = async <T,>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  return {
    url,
    port: listening,
    client,
    rpc,
    mine: async (blocks = 1) => {
      await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    snapshot: () => rpc<Hex>('evm_snapshot'),
    revert: (snapshotId) => rpc<boolean>('evm_revert', [snapshotId]),
    setBalance: async (address, wei) => {
      await rpc('anvil_setBalance', [address, `0x${wei.toString(16)}`]);
    },
    mined: (hash) => client.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 15_000 }),
    stop: () => stopChild(child),
  };
}

/** Polls `read` until `done` holds (a mined transaction, a state reached), failing after `timeoutMs`. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`anvil did not report its port within 10 s:\n${seen}`));
    }, 10_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /Listening on [\d.]+:(\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        // Keep draining stdout so anvil never blocks on a full pipe.
        child.stdout?.resume();
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with ${code} before listening:\n${seen}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
