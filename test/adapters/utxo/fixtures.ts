/** The published BIP-39 test mnemonic, and helpers the tests share. */
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import type { UtxoDepositReport } from '../../../server/adapters/chain/utxo/types.js';
import { AccountKeys } from '../../../server/adapters/chain/utxo/keys.js';
import { resolveParams } from '../../../server/adapters/chain/utxo/params.js';
import { UtxoScanner } from '../../../server/adapters/chain/utxo/scanner.js';
import { UtxoSigner } from '../../../server/adapters/chain/utxo/signer.js';
import { createTestDatabase } from '../../helpers/db.js';
import { startLitecoind } from './litecoind.js';

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

/** The LTC account the wallet tests pay from. */
export const LTC_XPUB = accountXpub("m/84'/2'/0'");

/**
 * What the LTC wallet tests start from: a regtest node (`replacement`: see startLitecoind) with a
 * spendable coinbase and a "payee" wallet, a fresh database, the account's keys, its signer read
 * from `mnemonicPath`, and a scanner that has scanned once. The caller stops the node and drops the
 * database.
 */
export async function startLtcWallet(mnemonicPath: string, options: { replacement?: boolean } = {}) {
  const node = await startLitecoind(options);
  const db = await createTestDatabase();
  await node.mine(101);
  const params = resolveParams('LTC', (await node.rpc.call<{ chain: string }>('getblockchaininfo')).chain);
  const keys = new AccountKeys(LTC_XPUB, params);
  const signer = UtxoSigner.fromFile(mnemonicPath, { LTC: LTC_XPUB });
  const scanner = new UtxoScanner({ rpc: node.rpc, sql: db.sql, keys, params, confirmations: 6, sink: recordingSink().sink });
  await node.rpc.call('createwallet', ['payee']);
  const payee = node.rpc.withPath('/wallet/payee');
  await scanner.scan();
  return { node, db, params, keys, signer, scanner, payee };
}
