/**
 * What a network family says about each of its networks: which currencies
 * it carries, how Kassa derives a deposit address on it, what a valid
 * address (and tag) is, how a payment URI and a transaction id are written.
 * One file per family (utxo, evm, tron, solana, xrp, stellar) fills this in;
 * `families/index.ts` joins them, and the currency/network tables of the
 * money catalog are derived from them.
 *
 * Pure, and a leaf: files under families/ import nothing of Kassa (checked by
 * dependency-cruiser), so the money catalog can be built from them.
 */
export type AddressValidation = { valid: true } | { valid: false; reason: string };

export const OK: AddressValidation = { valid: true };
export const bad = (reason: string): AddressValidation => ({ valid: false, reason });

export type DepositAddress = { address: string; destinationTag?: string };

/** A currency as one network carries it. */
export type CarriedCurrency = {
  /** Sandbox network fee to send it, in the currency (refund and withdrawal cost). */
  fee: string;
  /**
   * The smallest deposit (CONTRACT §4 `minAmount`): at least five times `fee`, so a refunded deposit
   * is never eaten by its fee, and above what the network refuses or strands (money/catalog.ts).
   */
  min: string;
  /** Present where Kassa pays out (withdrawals) in it on this network: the largest single withdrawal (`maxAmount`). */
  payout?: { max: string };
  /** The token contract (and its on-chain decimals) where the currency is not the network's own coin. */
  token?: { contract: string; decimals: number };
  /** The date of the spec change that added it (absent: from the start); later additions are listed last. */
  since?: string;
};

export type PaymentUriInput = { currency: string; address: string; amount: string; tag?: string | null };

export type NetworkRules = {
  family: 'utxo' | 'evm' | 'tron' | 'solana' | 'xrp' | 'stellar';
  /** The currencies deposited on this network (the 2022-09-26 table, SOL since 2024-05-16). */
  currencies: Readonly<Record<string, CarriedCurrency>>;
  /** Networks where deposits to one shared address are told apart by a tag or memo: its range. */
  tag?: { max: bigint; what: string };
  /** SLIP-44 coin type of its BIP44 keys (m/44'/coin'/0'/0/index); none where keys are ed25519. */
  coinType?: number;
  /** The address of a public key (compressed secp256k1, or ed25519): what a deriver from an xpub needs. */
  addressOf(publicKey: Uint8Array): string;
  /** The deposit address for `index` from `seed` (both already checked by the caller). Deterministic. */
  deriveAddress(seed: Uint8Array, index: number): DepositAddress;
  /** Format and checksum rules; `address` is non-empty, trimmed and at most 128 characters. */
  validateAddress(address: string): AddressValidation;
  /** The standard payment URI, shown as a QR code by the checkout. */
  paymentUri(p: PaymentUriInput): string;
  /** 32 bytes written as this network writes transaction ids (sandbox transactions). */
  formatTxHash(bytes: Uint8Array): string;
};

/**
 * The payment URI of a network that carries tokens (EVM, TRON, Solana): written one way for its
 * own coin, another for a currency it carries as a token contract.
 */
export const nativeOrTokenUri =
  (
    currencies: NetworkRules['currencies'],
    uri: { native: (p: PaymentUriInput) => string; token: (p: PaymentUriInput, token: NonNullable<CarriedCurrency['token']>) => string },
  ) =>
  (p: PaymentUriInput): string => {
    const token = currencies[p.currency]?.token;
    return token ? uri.token(p, token) : uri.native(p);
  };

/**
 * XRP and Stellar: one shared account per seed (its index 0), payments told
 * apart by the tag or memo id `index + 1` (never 0, which wallets treat as
 * "no tag"; it always fits uint32).
 */
export const sharedAccountKeys = (addressOf: (publicKey: Uint8Array) => string, accountKey: (seed: Uint8Array) => Uint8Array) => ({
  addressOf,
  deriveAddress: (seed: Uint8Array, index: number): DepositAddress => ({ address: addressOf(accountKey(seed)), destinationTag: String(index + 1) }),
});
