/**
 * The only holder of private keys: derives them from the BIP-39 mnemonic in
 * `KASSA_SIGNER_MNEMONIC_FILE` (../mnemonic-file.ts: owner-only, a valid mnemonic), checks that every
 * configured xpub is the mnemonic's own account key, and signs payouts built by the wallet.
 * BTC/LTC: P2WPKH with @scure/btc-signer (RBF signalled); BCH: P2PKH SIGHASH_FORKID with libauth.
 */
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { hex } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import { parseAccountXpub, sameAccountKey, type Branch } from './keys.js';
import { NETWORK_PARAMS, type UtxoNetwork } from './params.js';
import { readMnemonicFile, SignerConfigError } from '../mnemonic-file.js';

export { SignerConfigError };

/** Sequence that signals replace-by-fee (BIP-125) without enabling a lock time. */
export const RBF_SEQUENCE = 0xfffffffd;
export const FINAL_SEQUENCE = 0xffffffff;

export type UnsignedInput = { txid: string; vout: number; amount: bigint; script: string; branch: Branch; idx: number };
export type UnsignedOutput = { script: Uint8Array; amount: bigint };
export type UnsignedPayout = { network: UtxoNetwork; inputs: UnsignedInput[]; outputs: UnsignedOutput[] };
export type SignedPayout = { hex: string; txid: string; vsize: number };

/** What the wallet needs from the signer role. */
export interface PayoutSigner {
  sign(payout: UnsignedPayout): Promise<SignedPayout>;
}

export class UtxoSigner implements PayoutSigner {
  private readonly accounts = new Map<UtxoNetwork, HDKey>();
  /**
   * BCH signing, loaded on demand: libauth's signing brings its WebAssembly curve and hash
   * instances (~9 MiB resident), which no other process or network needs (the build makes bch.js a
   * chunk of its own, scripts/build-server.mjs). A signer with a BCH account starts loading it at
   * once, so the first BCH payout does not wait for it inside its database transaction.
   */
  private bch: Promise<typeof import('./bch.js')> | undefined;

  /**
   * @param xpubs the configured `KASSA_<NET>_XPUB` per network: each must equal the mnemonic's
   * account key at the network's path (public key and chain code; version bytes ignored).
   */
  constructor(mnemonic: string, xpubs: Partial<Record<UtxoNetwork, string>>) {
    const root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic));
    for (const [network, xpub] of Object.entries(xpubs) as [UtxoNetwork, string][]) {
      const account = root.derive(NETWORK_PARAMS[network].accountPath);
      if (!sameAccountKey(account, parseAccountXpub(xpub))) {
        throw new SignerConfigError(
          `KASSA_${network}_XPUB is not the account key of the mnemonic at ${NETWORK_PARAMS[network].accountPath}: refusing to sign`,
        );
      }
      this.accounts.set(network, account);
    }
    if ([...this.accounts.keys()].some((network) => NETWORK_PARAMS[network].forkId)) {
      this.bch = import('./bch.js');
      // Awaited by sign(); a failed load must not count as an unhandled rejection before that.
      this.bch.catch(() => {});
    }
  }

  static fromFile(path: string, xpubs: Partial<Record<UtxoNetwork, string>>): UtxoSigner {
    return new UtxoSigner(readMnemonicFile(path), xpubs);
  }

  private privateKey(network: UtxoNetwork, branch: Branch, idx: number): Uint8Array {
    const account = this.accounts.get(network);
    if (!account) throw new SignerConfigError(`no ${network} account configured for the signer`);
    return account.deriveChild(branch).deriveChild(idx).privateKey!;
  }

  async sign(payout: UnsignedPayout): Promise<SignedPayout> {
    const params = NETWORK_PARAMS[payout.network];
    if (params.forkId) {
      const { signBchTransaction } = await (this.bch ??= import('./bch.js'));
      const signed = signBchTransaction(
        payout.inputs.map((i) => ({
          txid: i.txid,
          vout: i.vout,
          amount: i.amount,
          lockingScript: hex.decode(i.script),
          privateKey: this.privateKey(payout.network, i.branch, i.idx),
        })),
        payout.outputs,
      );
      return { ...signed, vsize: signed.hex.length / 2 };
    }
    const tx = new Transaction({ version: 2 });
    for (const i of payout.inputs) {
      tx.addInput({
        txid: i.txid,
        index: i.vout,
        witnessUtxo: { script: hex.decode(i.script), amount: i.amount },
        sequence: params.rbf ? RBF_SEQUENCE : FINAL_SEQUENCE,
      });
    }
    for (const o of payout.outputs) tx.addOutput({ script: o.script, amount: o.amount });
    payout.inputs.forEach((i, index) => {
      if (!tx.signIdx(this.privateKey(payout.network, i.branch, i.idx), index)) throw new Error(`input ${index} could not be signed`);
    });
    tx.finalize();
    return { hex: tx.hex, txid: tx.id, vsize: tx.vsize };
  }
}
