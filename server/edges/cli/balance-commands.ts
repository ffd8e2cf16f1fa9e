/** Balances (CONTRACT §9 `balances`: the same as `GET /v1/balances`). */
import { ledgerBalances } from '../../modules/ledger/index.js';
import { command, requireBusiness, str, table } from './command.js';

export const balanceCommands = [
  command({
    name: 'balances',
    usage: '--business <id>',
    summary: 'per settlement currency: available, and pending (withdrawals accepted, not final, already out of available)',
    options: { business: str },
    async run(ctx, values) {
      const balances = await ledgerBalances(ctx.db, await requireBusiness(ctx, values));
      const rows = balances.map((b) => [b.currency, b.available, b.pending]);
      return { json: { balances }, human: rows.length ? table([['currency', 'available', 'pending'], ...rows]) : 'no balances yet' };
    },
  }),
];
