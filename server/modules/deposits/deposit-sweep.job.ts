/**
 * The `sweep_deposit` job's work (signer role): read the deposit and the
 * derivation index of its address, then ask the network's chain to sweep it
 * to the treasury, outside any database transaction.
 */
import { and, eq } from 'drizzle-orm';
import { deposits, payments } from '../../../db/schema.js';
import type { Network } from '../money/index.js';
import { chainFor, type ChainPorts, type SweepOutcome } from '../networks/ports.js';
import type { DepositsDeps } from './ports.js';

export async function sweepDeposit(
  deps: DepositsDeps,
  chains: ChainPorts,
  ref: { network: string; txHash: string; outputIndex: number },
): Promise<SweepOutcome | 'MISSING'> {
  const [row] = await deps.database.db
    .select({ currency: deposits.depositCurrency, addressIndex: payments.addressIndex })
    .from(deposits)
    .innerJoin(payments, eq(payments.id, deposits.paymentId))
    .where(and(eq(deposits.network, ref.network), eq(deposits.txHash, ref.txHash), eq(deposits.outputIndex, ref.outputIndex)));
  if (!row || row.addressIndex === null) return 'MISSING';
  const chain = chainFor(chains, ref.network as Network);
  if (!chain.sweep) return 'DONE';
  return chain.sweep({ network: ref.network as Network, txHash: ref.txHash, outputIndex: ref.outputIndex, currency: row.currency, addressIndex: row.addressIndex });
}
