/** The callback attempt log and redelivery (CONTRACT §9: deliveries:*; callbacks:list and callback:redeliver are their older names). */
import { listAttempts, listDeliveries, redeliver } from '../../modules/callbacks/index.js';
import { command, limitOf, optionalUuid, requireUuid, UsageError, type Command } from './command.js';

const STATUSES = ['PENDING', 'DELIVERED', 'EXPIRED'];

const list = command('deliveries:list [--business <id>] [--status PENDING|DELIVERED|EXPIRED] [--limit 50]', 'callback deliveries, newest first, with every attempt (time, status code, latency, error)', async (ctx, values) => {
  // Any case, as the other enumerated flags take it (--approval-policy two).
  const status = (values.status as string | undefined)?.toUpperCase();
  if (status !== undefined && !STATUSES.includes(status)) throw new UsageError('--status must be PENDING, DELIVERED or EXPIRED.');
  const deliveries = await listDeliveries(ctx.db, { businessId: optionalUuid(values, 'business'), status, limit: limitOf(values) });
  const withAttempts = await Promise.all(deliveries.map(async (d) => ({ ...d, attemptLog: await listAttempts(ctx.db, d.id) })));
  return {
    json: { deliveries: withAttempts },
    human:
      withAttempts
        .map(
          (d) =>
            `${d.id} ${d.kind} ${d.status} attempts=${d.attempts} ${d.url}${d.nextAttemptAt ? ` next=${d.nextAttemptAt.toISOString()}` : ''}\n` +
            d.attemptLog.map((a) => `    #${a.attempt} ${a.startedAt.toISOString()} ${a.statusCode ?? '-'} ${a.latencyMs}ms ${a.error ?? ''}`).join('\n'),
        )
        .join('\n') || 'no callbacks',
  };
});

const redeliverCommand = command('deliveries:redeliver --delivery <id>', 'send a delivered or expired callback again (same webhook-id), on a new retry schedule', async (ctx, values) => {
  const deliveryId = requireUuid(values, 'delivery');
  await redeliver(ctx.deps(), deliveryId);
  return { json: { deliveryId, status: 'PENDING' }, human: `callback ${deliveryId} queued for redelivery (the worker of \`npm start\` sends it)` };
});

const alias = (c: Command, name: string): Command => ({ ...c, name, summary: `the same as ${c.name}` });

export const deliveryCommands = [list, redeliverCommand, alias(list, 'callbacks:list'), alias(redeliverCommand, 'callback:redeliver')];
