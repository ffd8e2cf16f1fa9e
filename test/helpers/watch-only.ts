/**
 * Live mode without nodes, for tests of live pieces that never touch a chain
 * (rates, screening, validation): the given networks are offered with
 * watch-only addresses from a test xpub on mainnet formats, and nothing is
 * scanned or paid. Tests of the chains themselves use real nodes
 * (test/adapters/live).
 */
import type { LiveChains } from '../../server/adapters/chain/live/live-chains.js';
import { addressBook } from '../../server/adapters/chain/evm/index.js';
import { AccountKeys, resolveParams, type UtxoNetwork } from '../../server/adapters/chain/utxo/index.js';
import { SHARED_ADDRESS_SEQUENCE, paymentUri, validateAddress, type NetworkAccess } from '../../server/modules/networks/index.js';
import type { Network } from '../../server/modules/money/index.js';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';

/** The BIP-39 test mnemonic ("abandon … about"). */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

const ACCOUNT_PATHS: Record<'ETH' | 'BSC' | UtxoNetwork, string> = {
  ETH: "m/44'/60'/0'",
  BSC: "m/44'/60'/0'",
  BTC: "m/84'/0'/0'",
  LTC: "m/84'/2'/0'",
  BCH: "m/44'/145'/0'",
};

/** The account xpub of TEST_MNEMONIC for a network (what an operator exports from a wallet). */
export function testXpub(network: keyof typeof ACCOUNT_PATHS, mnemonic = TEST_MNEMONIC): string {
  return HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(ACCOUNT_PATHS[network]).publicExtendedKey;
}

export function watchOnlyChains(networks: (keyof typeof ACCOUNT_PATHS)[]): LiveChains {
  const derive = new Map<Network, (index: number) => string>();
  for (const network of networks) {
    if (network === 'ETH' || network === 'BSC') {
      const book = addressBook(testXpub(network));
      derive.set(network, (i) => book.depositAddress(i));
    } else {
      const keys = new AccountKeys(testXpub(network), resolveParams(network, 'main'));
      derive.set(network, (i) => keys.depositAddress(i).address);
    }
  }
  const access: NetworkAccess = {
    mode: 'live',
    enabled: networks,
    offers: (_currency, network) => derive.has(network),
    addressSequence: () => SHARED_ADDRESS_SEQUENCE,
    depositAddress: (network, index) => ({ address: derive.get(network)!(index) }),
    validateAddress,
    paymentUri: (network, p) => (derive.has(network) ? paymentUri({ network, ...p }) : null),
  };
  return { access, chains: {}, byNetwork: new Map(), signs: false, health: async () => ({}), background: [], close: async () => {} };
}
