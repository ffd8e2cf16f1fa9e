/**
 * The TRON family: BIP44 coin type 195, the EVM account id under TRON's
 * 0x41 version byte in base58check (T…); TRC-20 tokens; `tron:` payment
 * URIs; transaction ids in hex.
 */
import { concatBytes } from '@noble/hashes/utils.js';
import { OK, bad, nativeOrTokenUri, type AddressValidation, type NetworkRules } from './family.rules.js';
import { b58check, b58checkDecode, bip44Keys, evmAccountId, hex } from './keys.rules.js';

const TRX_COIN = 195;
const VERSION = 0x41;

function validateTron(address: string): AddressValidation {
  if (!address.startsWith('T')) return bad('TRON addresses start with T.');
  const data = b58checkDecode(address);
  if (!data) return bad('Not a valid TRON address: bad base58 characters or checksum.');
  if (data.length !== 21 || data[0] !== VERSION) return bad('Not a valid TRON address: expected a 0x41-prefixed 21-byte payload.');
  return OK;
}

const addressOf = (publicKey: Uint8Array) => b58check.encode(concatBytes(Uint8Array.of(VERSION), evmAccountId(publicKey)));

const currencies: NetworkRules['currencies'] = {
  // TRX is not shown by the spec; accepted on its own chain, not paid out (README).
  TRX: { fee: '1', min: '10' },
  USDT: { fee: '1', min: '5', payout: { max: '1000000' }, token: { contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 } },
  USDC: { fee: '1', min: '5', payout: { max: '1000000' }, token: { contract: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', decimals: 6 } },
};

export const TRON_NETWORKS = {
  TRX: {
    family: 'tron',
    currencies,
    ...bip44Keys(TRX_COIN, addressOf),
    validateAddress: validateTron,
    paymentUri: nativeOrTokenUri(currencies, {
      native: ({ address, amount }) => `tron:${address}?amount=${amount}`,
      token: ({ address, amount }, token) => `tron:${address}?token=${token.contract}&amount=${amount}`,
    }),
    formatTxHash: hex,
  },
} satisfies Record<string, NetworkRules>;
