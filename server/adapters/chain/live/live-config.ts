/**
 * Live mode's chain settings (CONTRACT §10), read from the environment:
 * which networks have a node, their xpubs, depths, tokens and fee floors,
 * and the signer's mnemonic file. Pure: the caller passes the environment.
 * Errors name the variable, and no network at all is an error naming the
 * variables to set.
 */
import { TOKEN_CONTRACTS } from '../../../modules/networks/index.js';
import { parseFeeBumpAfter, readNetworkConfig as readEvmConfig, type EvmNetworkConfig } from '../evm/index.js';
import { UTXO_NETWORKS, type UtxoNetwork } from '../utxo/index.js';
import { confirmationsFor, NETWORK_PARAMS } from '../utxo/params.js';

type Env = Record<string, string | undefined>;

export type UtxoNetworkConfig = {
  network: UtxoNetwork;
  rpcUrl: string;
  xpub: string;
  confirmations: number;
  fallbackFeeRate: string | undefined;
  /** `KASSA_<NET>_FEE_BUMP_AFTER_S`: a BTC/LTC payout unmined this long while the market asks more is replaced (BCH has no RBF). */
  feeBumpAfterS: number;
};

export type LiveChainConfig = {
  evm: EvmNetworkConfig[];
  utxo: UtxoNetworkConfig[];
  /** KASSA_SIGNER_MNEMONIC_FILE: read only by the signer role (or the combined process). */
  mnemonicFile: string | undefined;
  /** KASSA_CHAIN_POLL_MS: how often a worker scans each network (default 3000). */
  pollMs: number;
};

/** A network's variables besides its node's URL (`KASSA_<NET>_…`). */
const NETWORK_SETTINGS = ['XPUB', 'CONFIRMATIONS', 'TOKENS', 'FALLBACK_FEE_RATE', 'FEE_BUMP_AFTER_S'] as const;

/** Networks a live installation can run today, and those it cannot yet. */
export const LIVE_NETWORKS = ['ETH', 'BSC', 'BTC', 'LTC', 'BCH'] as const;
const NOT_YET_LIVE = ['TRX', 'SOL', 'XRP', 'XLM'] as const;

export class LiveChainConfigError extends Error {
  override name = 'LiveChainConfigError';
}

function wholeNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new LiveChainConfigError(`${name} must be a whole number ≥ 1, got "${raw}"`);
  return Number(raw);
}

function readUtxoConfig(env: Env, network: UtxoNetwork): UtxoNetworkConfig | undefined {
  const rpcUrl = env[`KASSA_${network}_RPC_URL`]?.trim();
  if (!rpcUrl) return undefined;
  const xpub = env[`KASSA_${network}_XPUB`]?.trim();
  if (!xpub) throw new LiveChainConfigError(`KASSA_${network}_RPC_URL is set, so KASSA_${network}_XPUB is required`);
  const fee = env[`KASSA_${network}_FALLBACK_FEE_RATE`]?.trim();
  if (fee && !/^\d+(\.\d+)?$/.test(fee)) throw new LiveChainConfigError(`KASSA_${network}_FALLBACK_FEE_RATE must be sat/vB, e.g. 10, got "${fee}"`);
  // A setting that would do nothing is refused rather than ignored: the operator expects a stuck payout to be replaced.
  if (!NETWORK_PARAMS[network].rbf && env[`KASSA_${network}_FEE_BUMP_AFTER_S`]?.trim()) {
    throw new LiveChainConfigError(
      `KASSA_${network}_FEE_BUMP_AFTER_S: ${network} has no replace-by-fee, so its payouts are never replaced at a higher fee; unset it (it can be set for ETH, BSC, BTC and LTC)`,
    );
  }
  return {
    network,
    rpcUrl,
    xpub,
    confirmations: wholeNumber(env, `KASSA_${network}_CONFIRMATIONS`, confirmationsFor(network)),
    fallbackFeeRate: fee || undefined,
    feeBumpAfterS: parseFeeBumpAfter(env[`KASSA_${network}_FEE_BUMP_AFTER_S`], network),
  };
}

export function readLiveChainConfig(env: Env): LiveChainConfig {
  const errors: string[] = [];
  const attempt = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  };
  for (const network of NOT_YET_LIVE) {
    if (env[`KASSA_${network}_RPC_URL`]?.trim()) {
      errors.push(`KASSA_${network}_RPC_URL: ${network} cannot run live yet (live networks: ${LIVE_NETWORKS.join(', ')})`);
    }
  }
  // A network's settings without its node would leave it off without a word (the URL's name misspelt, its value empty).
  for (const network of LIVE_NETWORKS) {
    if (env[`KASSA_${network}_RPC_URL`]?.trim()) continue;
    const set = NETWORK_SETTINGS.map((s) => `KASSA_${network}_${s}`).filter((name) => env[name]?.trim());
    if (set.length) {
      errors.push(`${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set but KASSA_${network}_RPC_URL is not, so ${network} would be off: set its node's URL, or unset ${set.length > 1 ? 'them' : 'it'}`);
    }
  }
  const evm = (['ETH', 'BSC'] as const).map((n) => attempt(() => readEvmConfig(env, n))).filter((c): c is EvmNetworkConfig => !!c);
  // A token Kassa does not take on the network (a typo: USTD) would be watched for nothing and never offered.
  for (const c of evm) {
    const known = Object.keys(TOKEN_CONTRACTS[c.network] ?? {});
    for (const token of c.tokens ?? []) {
      if (!known.includes(token.currency)) {
        errors.push(`KASSA_${c.network}_TOKENS: ${token.currency} is not a token Kassa takes on ${c.network} (it takes ${known.join(', ')})`);
      }
    }
  }
  const utxo = UTXO_NETWORKS.map((n) => attempt(() => readUtxoConfig(env, n))).filter((c): c is UtxoNetworkConfig => !!c);
  const pollMs = attempt(() => wholeNumber(env, 'KASSA_CHAIN_POLL_MS', 3000)) ?? 3000;
  if (errors.length) throw new LiveChainConfigError(errors.join('\n  '));
  if (evm.length + utxo.length === 0) {
    throw new LiveChainConfigError(
      'Live mode (KASSA_SANDBOX=false) needs at least one network: set KASSA_<NET>_RPC_URL and KASSA_<NET>_XPUB ' +
        `for one of ${LIVE_NETWORKS.join(', ')} (e.g. KASSA_ETH_RPC_URL, KASSA_ETH_XPUB), or run with KASSA_SANDBOX=true.`,
    );
  }
  const mnemonicFile = env.KASSA_SIGNER_MNEMONIC_FILE?.trim() || undefined;
  return { evm, utxo, mnemonicFile, pollMs };
}
