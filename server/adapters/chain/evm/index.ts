/** The EVM engine's public face (ETH, BSC): what a ChainPort adapter imports. */
export { DEFAULT_CONFIRMATIONS, parseFeeBumpAfter, parseTokens, readNetworkConfig, splitRpcCredentials, type EvmNetworkConfig } from './config.rules.js';
export { addressBook, parseExtendedPublicKey, EVM_ACCOUNT_PATH, type EvmAddressBook } from './keys.js';
export { reconcileNative, type NativeReconciliation } from './reconcile.js';
export { clientFromEnv, createEvmClient, type RpcOptions } from './rpc.js';
export { EvmScanner, type ScannerOptions, type ScanStatus, type TickResult } from './scanner.js';
export { EvmSigner, openEvmSigner, signerAccountKey, type SignerOptions, type SweepResult } from './signer.js';
export {
  NATIVE_CURRENCY,
  type DepositReport,
  type DepositSink,
  type DepositState,
  type EvmNetwork,
  type HeldResult,
  type PayoutRequest,
  type PayoutResult,
  type PayoutSettlement,
  type TokenContract,
} from './types.js';
