/**
 * Per-network, per-chain parameters of the Bitcoin family, as data. The chain is the
 * `chain` field of the node's `getblockchaininfo` (never inferred from a key prefix).
 */
export type UtxoNetwork = 'BTC' | 'LTC' | 'BCH';
export const UTXO_NETWORKS = ['BTC', 'LTC', 'BCH'] as const satisfies readonly UtxoNetwork[];

/** The chains a Core-compatible node reports; signet and testnet4 use the test prefixes. */
export type ChainName = 'main' | 'test' | 'testnet4' | 'signet' | 'regtest';

export type ChainParams = {
  /** bech32 human-readable part; null where the network has no segwit (BCH). */
  bech32: string | null;
  /** CashAddr prefix; null outside BCH. */
  cashAddrPrefix: string | null;
  pubKeyHash: number;
  scriptHash: number;
  wif: number;
};

export type NetworkParams = {
  network: UtxoNetwork;
  /** The currency ticker the deposits are reported in. */
  currency: string;
  /** Address type of Kassa's own addresses. */
  addressType: 'p2wpkh' | 'p2pkh-cashaddr';
  /** BIP-44/84 account path of the configured xpub (the signer derives it from the mnemonic). */
  accountPath: string;
  defaultConfirmations: number;
  /** Replace-by-fee signalled on payouts (BIP-125); BCH has no RBF. */
  rbf: boolean;
  /** SIGHASH_FORKID signing (BCH). */
  forkId: boolean;
  chains: Record<'main' | 'test' | 'regtest', ChainParams>;
};

export const NETWORK_PARAMS = {
  BTC: {
    network: 'BTC',
    currency: 'BTC',
    addressType: 'p2wpkh',
    accountPath: "m/84'/0'/0'",
    defaultConfirmations: 2,
    rbf: true,
    forkId: false,
    chains: {
      main: { bech32: 'bc', cashAddrPrefix: null, pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 },
      test: { bech32: 'tb', cashAddrPrefix: null, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
      regtest: { bech32: 'bcrt', cashAddrPrefix: null, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
    },
  },
  LTC: {
    network: 'LTC',
    currency: 'LTC',
    addressType: 'p2wpkh',
    accountPath: "m/84'/2'/0'",
    defaultConfirmations: 6,
    rbf: true,
    forkId: false,
    chains: {
      main: { bech32: 'ltc', cashAddrPrefix: null, pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 },
      test: { bech32: 'tltc', cashAddrPrefix: null, pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
      regtest: { bech32: 'rltc', cashAddrPrefix: null, pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
    },
  },
  BCH: {
    network: 'BCH',
    currency: 'BCH',
    addressType: 'p2pkh-cashaddr',
    accountPath: "m/44'/145'/0'",
    defaultConfirmations: 6,
    rbf: false,
    forkId: true,
    chains: {
      main: { bech32: null, cashAddrPrefix: 'bitcoincash', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 },
      test: { bech32: null, cashAddrPrefix: 'bchtest', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
      regtest: { bech32: null, cashAddrPrefix: 'bchreg', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
    },
  },
} as const satisfies Record<UtxoNetwork, NetworkParams>;

/** Which prefix set a reported chain uses. */
const CHAIN_FAMILY: Record<ChainName, 'main' | 'test' | 'regtest'> = {
  main: 'main',
  test: 'test',
  testnet4: 'test',
  signet: 'test',
  regtest: 'regtest',
};

export type ResolvedParams = Omit<NetworkParams, 'chains'> & { chain: ChainName } & ChainParams;

/** The parameters of `network` on the chain the node reports; throws on a chain it does not know. */
export function resolveParams(network: UtxoNetwork, chain: string): ResolvedParams {
  const family = CHAIN_FAMILY[chain as ChainName];
  if (!family) throw new Error(`${network}: unknown chain "${chain}" reported by getblockchaininfo`);
  const { chains, ...rest } = NETWORK_PARAMS[network];
  return { ...rest, chain: chain as ChainName, ...chains[family] };
}

/** `KASSA_<NET>_CONFIRMATIONS` or the network's default. */
export function confirmationsFor(network: UtxoNetwork, configured?: number): number {
  return configured ?? NETWORK_PARAMS[network].defaultConfirmations;
}

/** 1 coin = 10^8 base units on all three networks. */
export const DECIMALS = 8;
