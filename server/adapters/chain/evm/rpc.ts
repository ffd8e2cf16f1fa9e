/**
 * The node connection: a viem public client over HTTP JSON-RPC, with the
 * URL's credentials moved into a Basic auth header (Node's fetch refuses a
 * URL with credentials) and a timeout on every call, so a hung node fails a
 * scan instead of stalling it.
 */
import { createPublicClient, http, type PublicClient } from 'viem';
import { splitRpcCredentials } from './config.rules.js';
import type { EvmNetwork } from './types.js';

export type RpcOptions = {
  /** Per request, in ms (default 10 s). */
  timeoutMs?: number;
  /** viem's own retries with backoff (default 2); the scanner retries on its next tick anyway. */
  retryCount?: number;
};

export function createEvmClient(rpcUrl: string, options: RpcOptions = {}): PublicClient {
  const { url, headers } = splitRpcCredentials(rpcUrl);
  return createPublicClient({
    transport: http(url, {
      timeout: options.timeoutMs ?? 10_000,
      retryCount: options.retryCount ?? 2,
      fetchOptions: { headers },
    }),
  }) as PublicClient;
}

/** The client of `KASSA_<NET>_RPC_URL`, or undefined when that network is not configured. */
export function clientFromEnv(env: Record<string, string | undefined>, network: EvmNetwork, options?: RpcOptions): PublicClient | undefined {
  const url = env[`KASSA_${network}_RPC_URL`]?.trim();
  return url ? createEvmClient(url, options) : undefined;
}
