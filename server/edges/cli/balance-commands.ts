/** Balances (CONTRACT §9 `balances`: the same as `GET /v1/balances`). */
import { getBusiness } from '../../modules/businesses/index.js';
import { ledgerBalances } from '../../modules/ledger/index.js';
import { command, requireUuid, str, table } from './command.js';

export const balanceCommands = [
  command({
    name: 'balances',
    usage: '--business <id>',
    summary: 'per settlement currency: available, and pending (withdrawals accepted, not final, already out of available)',
    options: { business: str },
    async run(ctx, values) {
      const businessId = requireUuid(values, 'business');
      await getBusiness(ctx.db, businessId);
      const balances = await ledgerBalances(ctx.db, businessId);
      return {
        json: { balances },
        human: balances.length ? table([['currency', 'available', 'pending'], ...balances.map((b) => [b.currency, b.available, b.pending])]) : 'no balances yet',
      };
    },
  }),
];
