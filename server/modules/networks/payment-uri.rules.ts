/**
 * The standard payment URI of each network, which the checkout shows as a
 * QR code: BIP21 (BTC, BCH, LTC), EIP-681 (ETH, BSC and their tokens), the
 * TRON and Solana Pay forms, `ripple:` with a destination tag and Stellar's
 * SEP-7 — each written by its family (families/). Pure.
 */
import { NETWORK_RULES, type Network } from './families/index.js';

export { TOKEN_CONTRACTS } from './families/index.js';

export function paymentUri(p: { network: Network; currency: string; address: string; amount: string; tag?: string | null }): string {
  return NETWORK_RULES[p.network].paymentUri(p);
}
