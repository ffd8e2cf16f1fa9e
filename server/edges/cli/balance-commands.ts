/** Balances (CONTRACT §9 `balances`: the same as `GET /v1/balances`). */
import { getBusiness } from '../../modules/businesses/index.js';
import { getBusinessBalances } from '../../modules/withdrawals/index.js';
import { command, requireBusiness, table } from './command.js';

export const balanceCommands = [
  command('balances --business <id>', 'per settlement currency: available, and pending (withdrawals accepted, not final, already out of available)', async (ctx, values) => {
    // The very read behind GET /v1/balances, so the two never disagree.
    const { balances } = await getBusinessBalances(ctx.db, await getBusiness(ctx.db, await requireBusiness(ctx, values)));
    const rows = balances.map((b) => [b.currency, b.available, b.pending]);
    return { json: { balances }, human: rows.length ? table([['currency', 'available', 'pending'], ...rows]) : 'no balances yet' };
  }),
];
