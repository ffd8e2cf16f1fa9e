/**
 * Withdrawals' network I/O, for jobs only (and the sandbox's forced outcome):
 * read the withdrawal, broadcast outside any transaction (idempotent per
 * withdrawal id, so a retry after a crash sends the same transaction), then
 * record the result in a transaction of its own: COMPLETED when the chain
 * says it is final at once (the sandbox), else sent, with its hash, until
 * the chain's depth settles it (`recordSettlement`).
 */
import { Dec } from '../money/index.js';
import { chainFor, type ChainPorts } from '../networks/ports.js';
import { KassaError, notFound } from '../../platform/errors.js';
import type { WithdrawalsDeps } from './ports.js';
import type { WithdrawalRecord } from './withdrawal-record.rules.js';
import type { WithdrawalStatus } from './withdrawal.rules.js';
import { peekWithdrawal, recordOutcome, recordSent, withdrawalBroadcast } from './withdrawal.service.js';

/** The `broadcast_withdrawal` job: screen the destination, then send (or block). */
export async function broadcastWithdrawal(deps: WithdrawalsDeps, chains: ChainPorts, withdrawalId: string): Promise<WithdrawalStatus> {
  const found = await peekWithdrawal(deps.database.db, withdrawalId);
  if (!found) throw notFound(`Withdrawal ${withdrawalId} not found.`);
  const w = found.withdrawal;
  if (w.status !== 'PROCESSING') return w.status as WithdrawalStatus;
  // Sent already (a retry of this job): its outcome comes from the chain (`recordSettlement`).
  if (w.transactionId !== null) return w.status as WithdrawalStatus;
  if (new Dec(w.riskScore).gte(found.blockThreshold)) {
    return (await recordOutcome(deps, withdrawalId, ['PROCESSING'], 'BLOCKED', `destination risk ${w.riskScore}`)).status;
  }
  const broadcast = withdrawalBroadcast(w);
  const result = await chainFor(chains, broadcast.network).broadcast(broadcast);
  // Final at once (the sandbox's chain), or on its way: a live payout completes, or fails, once its
  // block is deep enough (the signer's pass records it), never at the broadcast.
  if (result.confirmedAt) return (await recordOutcome(deps, withdrawalId, ['PROCESSING'], 'COMPLETED', 'broadcast', result)).status;
  return (await recordSent(deps, withdrawalId, result.txHash)).status;
}

/** Sandbox test helper: force an outcome now (COMPLETED broadcasts first, as the job does). */
export async function forceOutcome(
  deps: WithdrawalsDeps,
  chains: ChainPorts,
  businessId: string,
  withdrawalId: string,
  outcome: 'COMPLETED' | 'FAILED' | 'BLOCKED',
): Promise<WithdrawalRecord> {
  const found = await peekWithdrawal(deps.database.db, withdrawalId);
  if (!found || found.withdrawal.businessId !== businessId) throw notFound(`Withdrawal ${withdrawalId} not found.`);
  const open = ['PROCESSING', 'PENDING_APPROVAL'] as const;
  const final = () => new KassaError(422, 'WITHDRAWAL_FINAL', `Withdrawal ${withdrawalId} is already ${found.withdrawal.status}.`);
  if (!(open as readonly string[]).includes(found.withdrawal.status)) throw final();
  // Sending is what approvers decide: the helper may end a withdrawal waiting for them badly, but
  // only an approval (then the helper, or the worker) sends it, as in live mode.
  if (outcome === 'COMPLETED' && found.withdrawal.status === 'PENDING_APPROVAL') {
    throw new KassaError(422, 'WITHDRAWAL_AWAITING_APPROVAL', `Withdrawal ${withdrawalId} waits for ${found.withdrawal.approvalsRequired} approval(s): approve it first (withdrawals.approve, or the CLI).`);
  }
  let result;
  if (outcome === 'COMPLETED') {
    const broadcast = withdrawalBroadcast(found.withdrawal);
    result = await chainFor(chains, broadcast.network).broadcast(broadcast);
  }
  const { status, record } = await recordOutcome(deps, withdrawalId, open, outcome, 'forced by test helper', result);
  // Someone else finished it between the read and the record.
  if (status !== outcome) throw new KassaError(422, 'WITHDRAWAL_FINAL', `Withdrawal ${withdrawalId} is already ${status}.`);
  return record;
}
