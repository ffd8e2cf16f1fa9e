/**
 * Opens every configured live network for one process role (CONTRACT §10):
 * - web: addresses and health only;
 * - worker: plus a scanner loop per network, reporting to the sink;
 * - signer: the only role that reads KASSA_SIGNER_MNEMONIC_FILE, checks it
 *   derives every configured xpub, and pays out, sweeps, sends unmined payouts again and records
 *   their outcome once final on chain;
 * - all (one process): worker, and signer when the mnemonic file is set.
 */
import type { Sql } from 'postgres';
import type { Network } from '../../../modules/money/index.js';
import { SHARED_ADDRESS_SEQUENCE, type NetworkAccess } from '../../../modules/networks/index.js';
import type { ChainPorts } from '../../../modules/networks/ports.js';
import { parseExtendedPublicKey, signerAccountKey } from '../evm/index.js';
import { parseAccountXpub, UtxoSigner } from '../utxo/index.js';
import { openEvmChain } from './evm-chain.js';
import type { ChainHealth, LiveChain, LiveSink, PayoutSettlement, ReplacedTransaction } from './live-chain.js';
import { LiveChainConfigError, type LiveChainConfig } from './live-config.js';
import { openUtxoChain } from './utxo-chain.js';

export type ProcessRole = 'all' | 'web' | 'worker' | 'signer';

/** Work a process runs beside its requests and jobs (the same shape as the root's Background). */
export type LoopTask = { name: string; start: () => void; stop: () => Promise<void>; runOnce: () => Promise<unknown> };

export type LiveChains = {
  access: NetworkAccess;
  /** The ChainPorts (payouts); only a process with the signer can use them. */
  chains: ChainPorts;
  byNetwork: ReadonlyMap<Network, LiveChain>;
  /** Whether this process signs (and so may run payout and sweep jobs). */
  signs: boolean;
  health(): Promise<Partial<Record<Network, ChainHealth>>>;
  /** Scanner loops (worker) and the payouts loop (signer). */
  background: LoopTask[];
  close(): Promise<void>;
};

/** Whether a process of `role` signs: the signer role, or the combined process given the mnemonic file. */
export function signsIn(role: ProcessRole, mnemonicFile: string | undefined): boolean {
  return role === 'signer' || (role === 'all' && !!mnemonicFile);
}

/** Run `step` every `everyMs` until stopped, one at a time; errors go to `onError` and the loop goes on. */
function loop(name: string, everyMs: number, step: () => Promise<unknown>, onError: (error: unknown) => void): LoopTask {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  const tick = () => {
    running = step()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  return {
    name,
    runOnce: step,
    start: () => {
      stopped = false;
      tick();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** Node calls at start retry for a while: a node restarting beside Kassa should not stop it from starting. */
async function withRetries<T>(what: string, open: () => Promise<T>, attempts: number, delayMs: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      if (error instanceof LiveChainConfigError || attempt >= attempts) {
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        throw new LiveChainConfigError(`${what}: ${reason}`);
      }
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}

export async function openLiveChains(
  config: LiveChainConfig,
  options: {
    sql: Sql;
    sink: LiveSink;
    role: ProcessRole;
    onError: (network: Network, error: unknown) => void;
    /** A payout's transaction replaced on chain (a fee bump): its record should show the new hash. */
    onReplaced?: (network: Network, replaced: ReplacedTransaction) => Promise<void>;
    /** The payouts sent on `network` whose records wait for their outcome (broadcast ids). */
    unsettledPayouts?: (network: Network) => Promise<string[]>;
    /** A payout final on chain: its record should end (completed, or failed when the chain ran it and it failed). */
    onSettled?: (network: Network, id: string, settled: Extract<PayoutSettlement, { state: 'FINAL' }>) => Promise<void>;
    /** Start-up attempts per node (default 5, 2 s apart). */
    startAttempts?: number;
  },
): Promise<LiveChains> {
  const signs = signsIn(options.role, config.mnemonicFile);
  if (options.role === 'signer' && !config.mnemonicFile) {
    throw new LiveChainConfigError('--role=signer needs KASSA_SIGNER_MNEMONIC_FILE (a 0600 file holding the BIP-39 mnemonic behind the xpubs)');
  }
  const mnemonicFile = signs ? config.mnemonicFile : undefined;
  // An xpub that does not parse is the operator's setting, not the node: named before any node is called
  // (opened behind the node's retries, it read "ETH node at KASSA_ETH_RPC_URL: extended public key: …").
  const xpubErrors: string[] = [];
  const checks = [...config.evm.map((c) => [c, parseExtendedPublicKey] as const), ...config.utxo.map((c) => [c, parseAccountXpub] as const)];
  for (const [c, parse] of checks) {
    try {
      parse(c.xpub);
    } catch (error) {
      xpubErrors.push(`KASSA_${c.network}_XPUB: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (xpubErrors.length) throw new LiveChainConfigError(xpubErrors.join('\n  '));
  let utxoSigner: UtxoSigner | undefined;
  // The keys are checked before any node is called: a wrong or exposed mnemonic file is refused at once,
  // naming the file, not retried as if a node were down.
  const keyError = (error: unknown) =>
    new LiveChainConfigError(`KASSA_SIGNER_MNEMONIC_FILE: ${(error instanceof Error ? error.message : String(error)).replace(/^KASSA_SIGNER_MNEMONIC_FILE /, '')}`);
  if (mnemonicFile && config.utxo.length) {
    try {
      utxoSigner = UtxoSigner.fromFile(mnemonicFile, Object.fromEntries(config.utxo.map((c) => [c.network, c.xpub])));
    } catch (error) {
      throw keyError(error);
    }
  }
  if (mnemonicFile) {
    for (const c of config.evm) {
      try {
        signerAccountKey({ mnemonicFile, xpub: c.xpub, network: c.network });
      } catch (error) {
        throw keyError(error);
      }
    }
  }
  const attempts = options.startAttempts ?? 5;
  const opened: LiveChain[] = [];
  for (const c of config.evm) {
    opened.push(
      await withRetries(`${c.network} node at KASSA_${c.network}_RPC_URL`, () => openEvmChain(c, { sql: options.sql, sink: options.sink, mnemonicFile }), attempts, 2000),
    );
  }
  for (const c of config.utxo) {
    opened.push(
      await withRetries(
        `${c.network} node at KASSA_${c.network}_RPC_URL`,
        () => openUtxoChain(c, { sql: options.sql, sink: options.sink, signer: utxoSigner }),
        attempts,
        2000,
      ),
    );
  }
  const byNetwork = new Map(opened.map((c) => [c.network, c]));
  const enabled = opened.map((c) => c.network);
  const access: NetworkAccess = {
    mode: 'live',
    enabled,
    offers: (currency, network) => byNetwork.get(network)?.offers(currency) ?? false,
    addressSequence: (network) => byNetwork.get(network)?.addressSequence ?? SHARED_ADDRESS_SEQUENCE,
    depositAddress: (network, index) => {
      const chain = byNetwork.get(network);
      if (!chain) throw new Error(`Network ${network} is not enabled`);
      return chain.depositAddress(index);
    },
    validateAddress: (network, address) =>
      byNetwork.get(network)?.validateAddress(address) ?? { valid: false, reason: `${network} is not enabled on this installation` },
    paymentUri: (network, p) => byNetwork.get(network)?.paymentUri(p) ?? null,
  };
  const background: LoopTask[] = [];
  if (options.role === 'worker' || options.role === 'all') {
    for (const chain of opened) {
      background.push(loop(`${chain.network} scanner`, config.pollMs, () => chain.scan(), (e) => options.onError(chain.network, e)));
    }
  }
  if (signs) {
    background.push(
      loop(
        'payouts',
        60_000,
        () =>
          Promise.all(
            opened.map(async (c) => {
              await c.rebroadcast().catch((e) => options.onError(c.network, e));
              // From the stored rows, every pass: a record missed once (a crash, a failed write) is caught up.
              const replaced = await c.replacedPayouts().catch((e) => (options.onError(c.network, e), []));
              for (const r of replaced) await options.onReplaced?.(c.network, r).catch((e) => options.onError(c.network, e));
              // Then the outcomes: a payout ends once its block is deep enough, never at its broadcast.
              const unsettled = await (options.unsettledPayouts?.(c.network) ?? Promise.resolve([])).catch((e) => (options.onError(c.network, e), []));
              for (const id of unsettled) {
                const settled = await c.settlement(id).catch((e) => (options.onError(c.network, e), null));
                if (settled?.state === 'FINAL') await options.onSettled?.(c.network, id, settled).catch((e) => options.onError(c.network, e));
              }
            }),
          ),
        () => {},
      ),
    );
  }
  return {
    access,
    chains: Object.fromEntries(opened.map((c) => [c.network, c.port])),
    byNetwork,
    signs,
    health: async () => Object.fromEntries(await Promise.all(opened.map(async (c) => [c.network, await c.health()] as const))),
    background,
    close: async () => {
      await Promise.all(opened.map((c) => c.close()));
    },
  };
}
