/**
 * The standard payment URI of each network, which the checkout shows as a
 * QR code: BIP21 (BTC, BCH, LTC), EIP-681 (ETH, BSC and their tokens), the
 * TRON and Solana Pay forms, `ripple:` with a destination tag and Stellar's
 * SEP-7. Pure.
 */
import type { Network } from '../money/index.js';
import { Dec } from '../money/index.js';

/** Token contracts (and their on-chain decimals) on networks where the currency is not native. */
export const TOKEN_CONTRACTS: Partial<Record<Network, Record<string, { contract: string; decimals: number }>>> = {
  ETH: {
    USDT: { contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
    USDC: { contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 },
    LINK: { contract: '0x514910771AF9Ca656af840dff83E8264EcF986CA', decimals: 18 },
  },
  BSC: {
    USDT: { contract: '0x55d398326f99059fF775485246999027B3197955', decimals: 18 },
    USDC: { contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18 },
    ETH: { contract: '0x2170Ed0880ac9A755fd29B2688956BD959F933F8', decimals: 18 },
  },
  TRX: {
    USDT: { contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 },
    USDC: { contract: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', decimals: 6 },
  },
  SOL: { USDC: { contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 } },
};

const EVM_CHAIN_IDS: Partial<Record<Network, number>> = { ETH: 1, BSC: 56 };

/** Base units (wei, …) as an integer string, as EIP-681 wants them. */
const baseUnits = (amount: string, decimals: number) => new Dec(amount).mul(new Dec(10).pow(decimals)).toFixed(0);

export function paymentUri(p: { network: Network; currency: string; address: string; amount: string; tag?: string | null }): string {
  const { network, currency, address, amount } = p;
  const token = TOKEN_CONTRACTS[network]?.[currency];
  switch (network) {
    case 'BTC':
      return `bitcoin:${address}?amount=${amount}`;
    case 'LTC':
      return `litecoin:${address}?amount=${amount}`;
    case 'BCH':
      return `${address.startsWith('bitcoincash:') ? address : `bitcoincash:${address}`}?amount=${amount}`;
    case 'ETH':
    case 'BSC': {
      const chain = EVM_CHAIN_IDS[network]!;
      return token
        ? `ethereum:${token.contract}@${chain}/transfer?address=${address}&uint256=${baseUnits(amount, token.decimals)}`
        : `ethereum:${address}@${chain}?value=${baseUnits(amount, 18)}`;
    }
    case 'TRX':
      return token ? `tron:${address}?token=${token.contract}&amount=${amount}` : `tron:${address}?amount=${amount}`;
    case 'SOL':
      return token ? `solana:${address}?amount=${amount}&spl-token=${token.contract}` : `solana:${address}?amount=${amount}`;
    case 'XRP':
      return `ripple:${address}?amount=${amount}${p.tag ? `&dt=${p.tag}` : ''}`;
    case 'XLM':
      return `web+stellar:pay?destination=${address}&amount=${amount}${p.tag ? `&memo=${p.tag}&memo_type=MEMO_ID` : ''}`;
  }
}
