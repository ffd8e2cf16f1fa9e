/**
 * Native balance reconciliation (issue 15: "native transfers by block scan
 * and balance reconciliation"): for each address, the node's balance at the
 * scanner's cursor against the flows recorded in `evm_deposits` and
 * `evm_transactions`. A non-zero `unexplained` is for an operator (and a
 * metric): typically ETH/BNB sent by a contract's internal call, which has no
 * transaction to the address and so no deposit report.
 */
import type postgres from 'postgres';
import { getAddress, type Address, type PublicClient } from 'viem';
import { unexplainedNative } from './scanner.rules.js';
import { NATIVE_CURRENCY, type EvmNetwork } from './types.js';

export type NativeReconciliation = {
  address: Address;
  height: bigint;
  balance: bigint;
  /** What the recorded flows explain. */
  expected: bigint;
  /** balance − expected, in wei. */
  unexplained: bigint;
};

export async function reconcileNative(options: {
  sql: postgres.Sql;
  network: EvmNetwork;
  client: PublicClient;
  addresses: string[];
  /** Default: the scanner's cursor (flows above it are not recorded yet). */
  height?: bigint;
}): Promise<NativeReconciliation[]> {
  const { sql, network, client } = options;
  let height = options.height;
  if (height === undefined) {
    const [cursor] = await sql<{ height: string }[]>`select max(height) as height from evm_blocks where network = ${network}`;
    if (!cursor?.height) throw new Error(`${network}: the scanner has no cursor yet`);
    height = BigInt(cursor.height);
  }
  const native = NATIVE_CURRENCY[network];
  const results: NativeReconciliation[] = [];
  for (const raw of options.addresses) {
    const address = getAddress(raw);
    const balance = await client.getBalance({ address, blockNumber: height });
    const [flows] = await sql<{ deposited: string; received: string; sent: string; fees: string }[]>`
      select
        (select coalesce(sum(amount_base), 0) from evm_deposits
          where network = ${network} and to_address = ${address} and currency = ${native}
            and state <> 'DROPPED' and block_number <= ${String(height)}::bigint) as deposited,
        (select coalesce(sum(amount_base), 0) from evm_transactions
          where network = ${network} and to_address = ${address} and currency = ${native}
            and status = 'MINED' and success and block_number <= ${String(height)}::bigint) as received,
        (select coalesce(sum(amount_base) filter (where currency = ${native} and success), 0) from evm_transactions
          where network = ${network} and from_address = ${address} and status = 'MINED' and block_number <= ${String(height)}::bigint) as sent,
        (select coalesce(sum(fee_paid), 0) from evm_transactions
          where network = ${network} and from_address = ${address} and status = 'MINED' and block_number <= ${String(height)}::bigint) as fees`;
    const unexplained = unexplainedNative({
      balance,
      deposited: BigInt(flows!.deposited),
      receivedFromKassa: BigInt(flows!.received),
      sentValue: BigInt(flows!.sent),
      feesPaid: BigInt(flows!.fees),
    });
    results.push({ address, height, balance, expected: balance - unexplained, unexplained });
  }
  return results;
}
