/**
 * After a live chain confirms a deposit on a network whose payouts come from
 * a treasury (EVM), the deposit is swept there. The sweep is a job for the
 * signer role, keyed by the deposit so a repeated report queues it once.
 * Chain reports are delivered at least once and marked delivered only after
 * this returns, so a crash between ingestion and this call repeats both.
 */
import { and, eq } from 'drizzle-orm';
import { deposits, payments } from '../../../db/schema.js';
import { enqueue } from '../../../jobs/enqueue.js';
import type { DepositReport } from '../networks/index.js';
import type { DepositsDeps } from './ports.js';

export const sweepJobKey = (r: Pick<DepositReport, 'network' | 'txHash' | 'outputIndex'>) => `sweep:${r.network}:${r.txHash}:${r.outputIndex}`;

/** Queue the sweep of a confirmed, recorded deposit (idempotent; false when there is nothing to sweep). */
export async function queueSweep(deps: DepositsDeps, report: DepositReport): Promise<boolean> {
  if (report.state !== 'CONFIRMED') return false;
  const [row] = await deps.database.db
    .select({ addressIndex: payments.addressIndex })
    .from(deposits)
    .innerJoin(payments, eq(payments.id, deposits.paymentId))
    .where(and(eq(deposits.network, report.network), eq(deposits.txHash, report.txHash), eq(deposits.outputIndex, report.outputIndex)));
  if (!row || row.addressIndex === null) return false;
  const payload = { network: report.network, txHash: report.txHash, outputIndex: report.outputIndex };
  await enqueue(deps.database.db, 'sweep_deposit', payload, { jobKey: sweepJobKey(report) });
  return true;
}
