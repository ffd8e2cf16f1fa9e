/**
 * From OFAC's digital-currency codes to Kassa networks, and one canonical form per address so
 * that a listed address matches however a chain or a person spells it. Pure.
 *
 * SDN code → Kassa network (by the address's shape where the code is a token, not a chain):
 *   XBT → BTC · LTC → LTC · BCH → BCH · TRX → TRX · XRP → XRP · XLM → XLM · SOL → SOL · BSC → BSC
 *   ETH → ETH, and the other EVM chains OFAC lists, ETC and ARB → ETH: an EVM address is one key
 *     on every EVM chain, so a sanctioned one is matched on ETH and BSC alike (see evmNetworks).
 *   USDT (ambiguous: OFAC lists Tether addresses of several chains under one code):
 *     0x… → ETH (ERC-20), T… → TRX (TRC-20), 1…/3… → BTC (Omni layer on Bitcoin).
 *   USDC (same): 0x… → ETH (ERC-20), T… → TRX, other base58 of Solana's length → SOL (SPL).
 *   Anything else (XMR, ZEC, DASH, BTG, BSV, XVG, …) is not a Kassa network: skipped, counted.
 *
 * Canonical address per network:
 *   ETH, BSC: lowercase hex (EIP-55 mixed case carries only a checksum; OFAC mixes cases).
 *   BTC, LTC: bech32 (bc1…, ltc1…, and test prefixes) lowercase; base58 untouched (case matters).
 *   BCH: the key hash, `p2pkh:<hex>` or `p2sh:<hex>`, from CashAddr with or without its prefix,
 *     in either case, or from a legacy base58 address: OFAC lists both forms.
 *   XLM: uppercase (StrKey is base32). TRX, XRP, SOL: untouched (base58, case matters).
 */
import { binToHex, decodeCashAddress } from '@bitauth/libauth';
// Legacy base58 addresses through the networks module's decoder (@scure/base), not libauth's
// decodeBase58Address: that one would load libauth's WebAssembly hash and curve instances
// (~9 MiB resident) into every process.
import { b58checkDecode } from '../../modules/networks/index.js';

export const KASSA_NETWORKS = ['BCH', 'BTC', 'LTC', 'XLM', 'XRP', 'ETH', 'BSC', 'SOL', 'TRX'] as const;
export type KassaNetwork = (typeof KASSA_NETWORKS)[number];
export const isKassaNetwork = (n: string): n is KassaNetwork => (KASSA_NETWORKS as readonly string[]).includes(n);

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;
const TRON_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
const BTC_BASE58_RE = /^[13][1-9A-HJ-NP-Za-km-z]{25,34}$/;
const SOLANA_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

const DIRECT: Record<string, KassaNetwork> = {
  XBT: 'BTC',
  LTC: 'LTC',
  BCH: 'BCH',
  TRX: 'TRX',
  XRP: 'XRP',
  XLM: 'XLM',
  SOL: 'SOL',
  BSC: 'BSC',
  ETH: 'ETH',
  ETC: 'ETH',
  ARB: 'ETH',
};

/** The Kassa network an SDN entry belongs to, or null when it is none of Kassa's. */
export function networkOfSdnEntry(code: string, address: string): KassaNetwork | null {
  const c = code.toUpperCase();
  const direct = DIRECT[c];
  if (direct) return direct;
  if (c === 'USDT' || c === 'USDC') {
    if (EVM_RE.test(address)) return 'ETH';
    if (TRON_RE.test(address)) return 'TRX';
    if (c === 'USDT' && BTC_BASE58_RE.test(address)) return 'BTC';
    if (c === 'USDC' && SOLANA_RE.test(address)) return 'SOL';
  }
  return null;
}

/** Networks an address of `network` is matched on: both EVM networks for an EVM address. */
export function matchNetworks(network: KassaNetwork): KassaNetwork[] {
  return network === 'ETH' || network === 'BSC' ? ['ETH', 'BSC'] : [network];
}

const BECH32_PREFIX_RE = /^(bc|tb|bcrt|ltc|tltc|rltc)1[02-9ac-hj-np-z]+$/i;

/** The canonical form of an address on a network (see the header). */
export function canonicalAddress(network: KassaNetwork, address: string): string {
  const a = address.trim();
  switch (network) {
    case 'ETH':
    case 'BSC':
      return a.toLowerCase();
    case 'BTC':
    case 'LTC':
      return BECH32_PREFIX_RE.test(a) ? a.toLowerCase() : a;
    case 'BCH':
      return bchKeyHash(a) ?? a;
    case 'XLM':
      return a.toUpperCase();
    default:
      return a;
  }
}

function bchKeyHash(address: string): string | null {
  const lower = address.toLowerCase();
  const candidates = lower.includes(':') ? [lower] : ['bitcoincash', 'bchtest', 'bchreg'].map((p) => `${p}:${lower}`);
  for (const candidate of candidates) {
    const decoded = decodeCashAddress(candidate);
    if (typeof decoded !== 'string') return `${decoded.type.replace('WithTokens', '')}:${binToHex(decoded.payload)}`;
  }
  const legacy = b58checkDecode(address);
  if (legacy?.length === 21) {
    // A version byte, then the 20-byte hash: 0/111 are P2PKH (mainnet/testnet), 5/196 P2SH.
    const [version] = legacy;
    const payload = legacy.subarray(1);
    if (version === 0 || version === 111) return `p2pkh:${binToHex(payload)}`;
    if (version === 5 || version === 196) return `p2sh:${binToHex(payload)}`;
  }
  return null;
}
