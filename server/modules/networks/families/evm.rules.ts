/**
 * The EVM family: Ethereum and BNB Smart Chain. One BIP44 key (coin type 60
 * on both: a BSC address is an Ethereum address) gives an EIP-55 address;
 * EIP-681 payment URIs (a token transfer names the contract and the amount
 * in base units); transaction ids 0x-hex.
 */
import { checksumAddress, parseUnits } from 'viem';
import { OK, bad, type AddressValidation, type NetworkRules, type PaymentUriInput } from './family.rules.js';
import { bip44Keys, evmAccountId, hex } from './keys.rules.js';

/** SLIP-44 coin type of Ethereum, used by every EVM chain here. */
const ETH_COIN = 60;

function validateEvm(address: string): AddressValidation {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return bad('Expected 0x followed by 40 hex characters.');
  const body = address.slice(2);
  // Single-case addresses carry no checksum and are accepted as is.
  if (body === body.toLowerCase() || body === body.toUpperCase()) return OK;
  return checksumAddress(`0x${body.toLowerCase()}`) === address ? OK : bad('Mixed-case address has a bad EIP-55 checksum.');
}

const addressOf = (publicKey: Uint8Array) => checksumAddress(`0x${hex(evmAccountId(publicKey))}`);

/**
 * The EIP-681 URI of a payment on chain `chainId`: the native coin, or a `transfer` call of `token`.
 * EIP-681 wants integers in base units (wei, or the token's smallest unit). A wallet sends on the chain
 * the URI names, so a live installation passes its node's chain id and contracts (a test chain's, not
 * mainnet's).
 */
export function eip681Uri(chainId: number, p: PaymentUriInput, token?: { contract: string; decimals: number }): string {
  return token
    ? `ethereum:${token.contract}@${chainId}/transfer?address=${p.address}&uint256=${parseUnits(p.amount, token.decimals)}`
    : `ethereum:${p.address}@${chainId}?value=${parseUnits(p.amount, 18)}`;
}

function evmNetwork(chainId: number, currencies: NetworkRules['currencies']): NetworkRules {
  return {
    family: 'evm',
    currencies,
    ...bip44Keys(ETH_COIN, addressOf),
    validateAddress: validateEvm,
    paymentUri: (p) => eip681Uri(chainId, p, currencies[p.currency]?.token),
    formatTxHash: (bytes) => `0x${hex(bytes)}`,
  };
}

export const EVM_NETWORKS = {
  ETH: evmNetwork(1, {
    ETH: { fee: '0.0004', min: '0.002', payout: { max: '200' } },
    USDT: { fee: '1.5', min: '10', payout: { max: '1000000' }, token: { contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 } },
    USDC: { fee: '1.5', min: '10', payout: { max: '1000000' }, token: { contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 } },
    LINK: { fee: '0.08', min: '0.5', payout: { max: '20000' }, token: { contract: '0x514910771AF9Ca656af840dff83E8264EcF986CA', decimals: 18 } },
  }),
  BSC: evmNetwork(56, {
    // BNB is not shown by the spec; accepted on its own chain, not paid out (README).
    BNB: { fee: '0.0002', min: '0.001' },
    USDT: { fee: '0.1', min: '1', payout: { max: '1000000' }, token: { contract: '0x55d398326f99059fF775485246999027B3197955', decimals: 18 } },
    USDC: { fee: '0.1', min: '1', payout: { max: '1000000' }, token: { contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18 } },
    ETH: { fee: '0.00005', min: '0.0005', payout: { max: '200' }, token: { contract: '0x2170Ed0880ac9A755fd29B2688956BD959F933F8', decimals: 18 } },
  }),
} satisfies Record<string, NetworkRules>;
