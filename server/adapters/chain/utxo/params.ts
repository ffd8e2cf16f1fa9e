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

/** Version bytes of addresses and keys on a main chain or on the test chains (testnet, signet, regtest). */
type Versions = Pick<ChainParams, 'pubKeyHash' | 'scriptHash' | 'wif'>;
const BITCOIN_MAIN: Versions = { pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 };
const BITCOIN_TEST: Versions = { pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };

/** What sets one network apart: its BIP-44 coin type, its address prefix per chain, its version bytes. */
type NetworkRow = {
  coinType: number;
  confirmations: number;
  /** The address prefix on main, test and regtest: bech32 HRP (segwit) or CashAddr prefix. */
  prefixes: readonly [main: string, test: string, regtest: string];
  main: Versions;
  test: Versions;
};

/**
 * A network's parameters from its row. A segwit network pays to p2wpkh (BIP-84 account) and
 * signals RBF; Bitcoin Cash has neither, pays to CashAddr p2pkh (BIP-44) and signs with FORKID.
 */
function networkParams(network: UtxoNetwork, segwit: boolean, row: NetworkRow): NetworkParams {
  const chain = (prefix: string, versions: Versions): ChainParams =>
    segwit ? { bech32: prefix, cashAddrPrefix: null, ...versions } : { bech32: null, cashAddrPrefix: prefix, ...versions };
  const [main, test, regtest] = row.prefixes;
  return {
    network,
    currency: network,
    addressType: segwit ? 'p2wpkh' : 'p2pkh-cashaddr',
    accountPath: `m/${segwit ? 84 : 44}'/${row.coinType}'/0'`,
    defaultConfirmations: row.confirmations,
    rbf: segwit,
    forkId: !segwit,
    chains: { main: chain(main, row.main), test: chain(test, row.test), regtest: chain(regtest, row.test) },
  };
}

export const NETWORK_PARAMS: Record<UtxoNetwork, NetworkParams> = {
  BTC: networkParams('BTC', true, { coinType: 0, confirmations: 2, prefixes: ['bc', 'tb', 'bcrt'], main: BITCOIN_MAIN, test: BITCOIN_TEST }),
  LTC: networkParams('LTC', true, {
    coinType: 2,
    confirmations: 6,
    prefixes: ['ltc', 'tltc', 'rltc'],
    main: { pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 },
    test: { pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
  }),
  BCH: networkParams('BCH', false, { coinType: 145, confirmations: 6, prefixes: ['bitcoincash', 'bchtest', 'bchreg'], main: BITCOIN_MAIN, test: BITCOIN_TEST }),
};

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
