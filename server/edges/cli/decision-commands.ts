/** An operator's decisions: withdrawal approvals and compliance reviews (CONTRACT §9). */
import { decideCompliance, depositsInReview } from '../../modules/deposits/index.js';
import { decideWithdrawal, getWithdrawal } from '../../modules/withdrawals/index.js';
import { command, limitOf, optionalString, optionalUuid, requireAdmin, requireChoice, requireUuid } from './command.js';

const WITHDRAWAL_DECISIONS = {
  APPROVE: ['withdrawal:approve --withdrawal <id> --operator <name>', 'approve a PENDING_APPROVAL withdrawal (policy TWO needs two different operators)'],
  REJECT: [
    'withdrawal:reject --withdrawal <id> --operator <name> [--reason r]',
    'reject a PENDING_APPROVAL withdrawal: the balance is credited back, a FAILED callback is sent',
  ],
} as const;

function withdrawalDecision(decision: 'APPROVE' | 'REJECT') {
  const [line, summary] = WITHDRAWAL_DECISIONS[decision];
  return command(line, summary, async (ctx, values) => {
    const withdrawalId = requireUuid(values, 'withdrawal');
    const operator = await requireAdmin(ctx, values);
    const deps = ctx.deps();
    await decideWithdrawal(deps, withdrawalId, operator, decision, optionalString(values, 'reason'));
    const w = await getWithdrawal(deps, null, withdrawalId);
    return {
      json: w,
      human: `withdrawal ${withdrawalId} ${String(w.status)} (approvals ${String(w.approvals)}/${String(w.approvalsRequired)})`,
    };
  });
}

export const decisionCommands = [
  withdrawalDecision('APPROVE'),
  withdrawalDecision('REJECT'),
  command('compliance:list [--business <id>] [--limit 50]', 'deposits waiting in COMPLIANCE_REVIEW, oldest first, with their risk score and sender: the ids compliance:decide takes', async (ctx, values) => {
    const waiting = await depositsInReview(ctx.db, { businessId: optionalUuid(values, 'business'), limit: limitOf(values) });
    return {
      json: { deposits: waiting },
      human:
        waiting
          .map((d) => `${d.depositId} ${d.amount.replace(/\.?0+$/, '')} ${d.depositCurrency} on ${d.network} from ${d.fromAddress} risk ${d.riskScore} (payment ${d.paymentId}, ${d.receivedAt.toISOString()})`)
          .join('\n') || 'no deposit waits for a compliance decision',
    };
  }),
  command('compliance:decide --deposit <id> --decision approve|block --operator <name>', 'end a deposit\'s COMPLIANCE_REVIEW: approve (it is credited once confirmed) or block', async (ctx, values) => {
    const depositId = requireUuid(values, 'deposit');
    const decision = requireChoice(values, 'decision', ['approve', 'block'] as const);
    const operator = await requireAdmin(ctx, values);
    const status = await decideCompliance(ctx.deps(), depositId, decision === 'approve' ? 'APPROVE' : 'REJECT', operator);
    return { json: { depositId, decision: decision.toUpperCase(), status }, human: `deposit ${depositId} ${status}` };
  }),
];
