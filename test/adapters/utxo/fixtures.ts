/** The published BIP-39 test mnemonic, and helpers the tests share. */
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import type { UtxoDepositReport } from '../../../server/adapters/chain/utxo/types.js';

export const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/** The account xpub at `path` (plain xpub version bytes: the engine ignores them anyway). */
export function accountXpub(path: string, mnemonic = MNEMONIC): string {
  return HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(path).publicExtendedKey;
}

/** A sink that records every report, as Kassa's ingestion would receive them. */
export function recordingSink() {
  const reports: UtxoDepositReport[] = [];
  return {
    reports,
    sink: async (r: UtxoDepositReport) => {
      reports.push(r);
    },
    of: (txHash: string, outputIndex: number) => reports.filter((r) => r.txHash === txHash && r.outputIndex === outputIndex),
    confirmedCount: (txHash: string, outputIndex: number) =>
      reports.filter((r) => r.txHash === txHash && r.outputIndex === outputIndex && r.state === 'CONFIRMED').length,
  };
}
