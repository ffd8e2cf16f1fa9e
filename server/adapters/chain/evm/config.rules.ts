/**
 * Reading the EVM part of the environment (CONTRACT §10), pure: the caller
 * passes `process.env` (or any record) and gets typed settings or an error
 * that names the variable.
 */
import { getAddress, isAddress } from 'viem';
import type { EvmNetwork, TokenContract } from './types.js';

export const DEFAULT_CONFIRMATIONS: Record<EvmNetwork, number> = { ETH: 12, BSC: 15 };

export type EvmNetworkConfig = {
  network: EvmNetwork;
  rpcUrl: string;
  xpub: string;
  confirmations: number;
  /** Replaces the catalog's contracts when set (only these are watched; set and empty: none). */
  tokens: TokenContract[] | undefined;
  /** `KASSA_<NET>_FEE_BUMP_AFTER_S`: a transaction unmined this long while the market asks more is replaced at higher fees. */
  feeBumpAfterS: number;
};

/** Ten minutes: past a few blocks of a fee spike on either chain, before a payout looks lost. */
export const DEFAULT_FEE_BUMP_AFTER_S = 600;

/** `USDT=0x…,USDC=0x…` → contracts, EIP-55; throws on a malformed entry. */
export function parseTokens(value: string, variable = 'TOKENS'): TokenContract[] {
  const tokens: TokenContract[] = [];
  for (const part of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [currency, address, ...rest] = part.split('=').map((p) => p.trim());
    if (!currency || !address || rest.length > 0 || !/^[A-Z0-9]{2,10}$/.test(currency)) {
      throw new Error(`${variable}: "${part}" is not CURRENCY=0xADDRESS`);
    }
    if (!isAddress(address, { strict: false })) throw new Error(`${variable}: ${address} is not an address`);
    if (tokens.some((t) => t.currency === currency)) throw new Error(`${variable}: ${currency} is listed twice`);
    tokens.push({ currency, address: getAddress(address) });
  }
  return tokens;
}

export function parseConfirmations(value: string | undefined, network: EvmNetwork): number {
  if (value === undefined || value.trim() === '') return DEFAULT_CONFIRMATIONS[network];
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw new Error(`KASSA_${network}_CONFIRMATIONS must be a whole number ≥ 1, got "${value}"`);
  }
  return Number(value);
}

/** `KASSA_<NET>_FEE_BUMP_AFTER_S` of any network that replaces stuck payouts (ETH, BSC, BTC, LTC). */
export function parseFeeBumpAfter(value: string | undefined, network: string): number {
  if (value === undefined || value.trim() === '') return DEFAULT_FEE_BUMP_AFTER_S;
  if (!/^\d+$/.test(value.trim())) throw new Error(`KASSA_${network}_FEE_BUMP_AFTER_S must be a whole number of seconds, got "${value}"`);
  return Number(value);
}

/** The network's settings, or undefined when its node is not configured (the network is then off). */
export function readNetworkConfig(env: Record<string, string | undefined>, network: EvmNetwork): EvmNetworkConfig | undefined {
  const rpcUrl = env[`KASSA_${network}_RPC_URL`]?.trim();
  if (!rpcUrl) return undefined;
  const xpub = env[`KASSA_${network}_XPUB`]?.trim();
  if (!xpub) throw new Error(`KASSA_${network}_RPC_URL is set, so KASSA_${network}_XPUB is required`);
  const tokens = env[`KASSA_${network}_TOKENS`];
  return {
    network,
    rpcUrl,
    xpub,
    confirmations: parseConfirmations(env[`KASSA_${network}_CONFIRMATIONS`], network),
    // Set but empty: no tokens at all (only the native coin), e.g. a test chain without contracts.
    tokens: tokens === undefined ? undefined : parseTokens(tokens, `KASSA_${network}_TOKENS`),
    feeBumpAfterS: parseFeeBumpAfter(env[`KASSA_${network}_FEE_BUMP_AFTER_S`], network),
  };
}

/**
 * Node's fetch refuses a URL with credentials in it: take them out and send
 * them as HTTP Basic auth instead (decoded first: a URL percent-encodes them).
 */
export function splitRpcCredentials(rpcUrl: string): { url: string; headers: Record<string, string> } {
  const url = new URL(rpcUrl);
  if (!url.username && !url.password) return { url: url.toString(), headers: {} };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const token = Buffer.from(`${user}:${password}`, 'utf8').toString('base64');
  return { url: url.toString(), headers: { authorization: `Basic ${token}` } };
}
