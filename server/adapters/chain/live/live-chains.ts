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
import { NETWORKS, type Network } from '../../../modules/money/index.js';
import { SHARED_ADDRESS_SEQUENCE, type NetworkAccess } from '../../../modules/networks/index.js';
import type { ChainPorts } from '../../../modules/networks/ports.js';
import { parseExtendedPublicKey, signerAccountKey } from '../evm/index.js';
import { parseAccountXpub, UtxoSigner } from '../utxo/index.js';
import { evmCurrencies, openEvmChain } from './evm-chain.js';
import type { ChainHealth, LiveChain, LiveSink, PayoutSettlement, ReplacedTransaction } from './live-chain.js';
import { LiveChainConfigError, type LiveChainConfig } from './live-config.js';
import { openUtxoChain } from './utxo-chain.js';

export type ProcessRole = 'all' | 'web' | 'worker' | 'signer';

/** Work a process runs beside its requests and jobs (the same shape as the root's Background). */
export type LoopTask = { name: string; web?: boolean; start: () => void; stop: () => Promise<void>; runOnce: () => Promise<unknown> };

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

/** A node that did not answer in its start-up attempts (as opposed to a setting it refused). */
export class NodeUnreachableError extends Error {
  override name = 'NodeUnreachableError';
}

/** How often a network whose node did not answer at start is tried again, in every role. */
export const RECONNECT_MS = 10_000;

/** An error's first line, for a one-line reason in the log and /ready. */
const firstLine = (error: unknown): string => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

/**
 * Node calls at start retry for a while: a node restarting beside Kassa should not stop it from starting.
 * A setting the node shows to be wrong (LiveChainConfigError) is not retried.
 */
async function withRetries<T>(what: string, open: () => Promise<T>, attempts: number, delayMs: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      const reason = firstLine(error);
      if (error instanceof LiveChainConfigError) throw new LiveChainConfigError(`${what}: ${reason}`);
      if (attempt >= attempts) throw new NodeUnreachableError(`${what}: ${reason}`);
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
    /**
     * A node did not answer in its start-up attempts: the process starts without its network (503
     * NETWORK_UNAVAILABLE for it, /ready 503) and tries it again every RECONNECT_MS.
     */
    onUnreachable?: (network: Network, message: string) => void;
    /** A network whose node did not answer at start is open now. */
    onConnected?: (network: Network) => void;
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
  const openers = [
    ...config.evm.map((c) => ({
      network: c.network,
      currencies: evmCurrencies(c),
      open: () => openEvmChain(c, { sql: options.sql, sink: options.sink, mnemonicFile }),
    })),
    ...config.utxo.map((c) => ({
      network: c.network,
      currencies: [c.network], // BTC, LTC and BCH are their own coins
      open: () => openUtxoChain(c, { sql: options.sql, sink: options.sink, signer: utxoSigner }),
    })),
  ];
  const what = (network: Network) => `${network} node at KASSA_${network}_RPC_URL`;
  // Filled as networks open (at start, or later for a node that did not answer then): the arrays and
  // the map are the ones `access`, the payouts pass and health read, so a network joins them in place.
  const opened: LiveChain[] = [];
  const byNetwork = new Map<Network, LiveChain>();
  const enabled: Network[] = [];
  const chains: ChainPorts = {};
  /** Configured networks whose node has not answered since start, with the last reason. */
  const waiting = new Map<Network, { open: () => Promise<LiveChain>; currencies: readonly string[]; reason: string }>();
  const adopt = (chain: LiveChain) => {
    opened.push(chain);
    byNetwork.set(chain.network, chain);
    chains[chain.network] = chain.port;
    enabled.splice(0, enabled.length, ...NETWORKS.filter((n) => byNetwork.has(n)));
    waiting.delete(chain.network);
  };
  for (const o of openers) {
    try {
      adopt(await withRetries(what(o.network), o.open, attempts, 2000));
    } catch (error) {
      // One node down must not stop the others' payments: start without it, say so, and keep trying.
      if (!(error instanceof NodeUnreachableError)) throw error;
      waiting.set(o.network, { open: o.open, currencies: o.currencies, reason: error.message });
      options.onUnreachable?.(o.network, error.message);
    }
  }
  const access: NetworkAccess = {
    mode: 'live',
    enabled,
    // Read only when a request names a network not enabled: from the waiting list, not kept beside it.
    waitsFor: (currency, network) => {
      const w = waiting.get(network as Network);
      return w !== undefined && (!currency || w.currencies.includes(currency));
    },
    offers: (currency, network) => byNetwork.get(network)?.offers(currency) ?? false,
    addressSequence: (network) => byNetwork.get(network)?.addressSequence ?? SHARED_ADDRESS_SEQUENCE,
    depositAddress: (network, index) => {
      const chain = byNetwork.get(network);
      if (!chain) throw new Error(`Network ${network} is not enabled`);
      return chain.depositAddress(index);
    },
    validateAddress: (network, address) =>
      byNetwork.get(network)?.validateAddress(address) ?? {
        valid: false,
        reason: waiting.has(network) ? `${network}'s node has not answered since Kassa started; try again later` : `${network} is not enabled on this installation`,
      },
    paymentUri: (network, p) => byNetwork.get(network)?.paymentUri(p) ?? null,
  };
  const background: LoopTask[] = [];
  if (waiting.size > 0) {
    // Every role, web included: a web process answers for the network (payments, /ready) once it opens.
    background.push({
      web: true,
      ...loop(
        'reconnect',
        RECONNECT_MS,
        async () => {
          for (const [network, w] of waiting) {
            try {
              adopt(await w.open());
              options.onConnected?.(network);
            } catch (error) {
              w.reason = `${what(network)}: ${firstLine(error)}`;
              // A node that answers but shows a setting wrong (a token contract missing on its chain) needs the operator.
              if (error instanceof LiveChainConfigError) options.onError(network, new LiveChainConfigError(w.reason));
            }
          }
        },
        () => {},
      ),
    });
  }
  if (options.role === 'worker' || options.role === 'all') {
    for (const { network } of openers) {
      // A network still waiting for its node has nothing to scan yet; its loop starts scanning once it opens.
      background.push(loop(`${network} scanner`, config.pollMs, async () => byNetwork.get(network)?.scan(), (e) => options.onError(network, e)));
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
    chains,
    byNetwork,
    signs,
    health: async () => ({
      ...Object.fromEntries(await Promise.all(opened.map(async (c) => [c.network, await c.health()] as const))),
      ...Object.fromEntries(
        [...waiting].map(([network, w]) => [
          network,
          { ok: false, height: null, tip: null, lag: null, lastScanAt: null, reorgs: null, creditedOffChain: null, error: `not open since start: ${w.reason}` },
        ]),
      ),
    }),
    background,
    close: async () => {
      await Promise.all(opened.map((c) => c.close()));
    },
  };
}
