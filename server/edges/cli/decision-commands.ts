/** An operator's decisions: withdrawal approvals and compliance reviews (CONTRACT §9). */
import { decideCompliance } from '../../modules/deposits/index.js';
import { decideWithdrawal, getWithdrawal } from '../../modules/withdrawals/index.js';
import { command, optionalString, requireAdmin, requireChoice, requireUuid, str } from './command.js';

function withdrawalDecision(decision: 'APPROVE' | 'REJECT') {
  return command({
    name: decision === 'APPROVE' ? 'withdrawal:approve' : 'withdrawal:reject',
    usage: `--withdrawal <id> --operator <name>${decision === 'REJECT' ? ' [--reason r]' : ''}`,
    summary:
      decision === 'APPROVE'
        ? 'approve a PENDING_APPROVAL withdrawal (policy TWO needs two different operators)'
        : 'reject a PENDING_APPROVAL withdrawal: the balance is credited back, a FAILED callback is sent',
    options: { withdrawal: str, operator: str, ...(decision === 'REJECT' ? { reason: str } : {}) },
    async run(ctx, values) {
      const withdrawalId = requireUuid(values, 'withdrawal');
      const operator = await requireAdmin(ctx, values);
      const deps = ctx.deps();
      await decideWithdrawal(deps, withdrawalId, operator, decision, optionalString(values, 'reason'));
      const w = await getWithdrawal(deps, null, withdrawalId);
      return {
        json: w,
        human: `withdrawal ${withdrawalId} ${String(w.status)} (approvals ${String(w.approvals)}/${String(w.approvalsRequired)})`,
      };
    },
  });
}

export const decisionCommands = [
  withdrawalDecision('APPROVE'),
  withdrawalDecision('REJECT'),
  command({
    name: 'compliance:decide',
    usage: '--deposit <id> --decision approve|block --operator <name>',
    summary: 'end a deposit\'s COMPLIANCE_REVIEW: approve (it is credited once confirmed) or block',
    options: { deposit: str, decision: str, operator: str },
    async run(ctx, values) {
      const depositId = requireUuid(values, 'deposit');
      const decision = requireChoice(values, 'decision', ['approve', 'block'] as const);
      const operator = await requireAdmin(ctx, values);
      const status = await decideCompliance(ctx.deps(), depositId, decision === 'approve' ? 'APPROVE' : 'REJECT', operator);
      return { json: { depositId, decision: decision.toUpperCase(), status }, human: `deposit ${depositId} ${status}` };
    },
  }),
];
