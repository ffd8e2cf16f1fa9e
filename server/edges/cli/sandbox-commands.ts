/** Sandbox helpers: a simulated deposit, and the checkout's currency choice from the shell. */
import { SimulateDepositSchema } from '../../modules/deposits/index.js';
import { chooseCurrency, loadPaymentById } from '../../modules/payments/index.js';
import { command, requireUuid, UsageError } from './command.js';

export const sandboxCommands = [
  command('deposit:simulate --payment <id> --currency <C> --network <N> --amount <a> [--from <address>] [--risk-score <0-10>] [--no-confirm]', '(sandbox) a simulated deposit to a payment; it confirms after KASSA_SANDBOX_CONFIRM_DELAY_S (or is dropped with --no-confirm) once `npm start` runs the worker', async (ctx, values) => {
    const deps = ctx.deps();
    if (!deps.config.sandbox || !deps.faucet) throw new UsageError('deposit:simulate exists only in sandbox.');
    const payment = await loadPaymentById(ctx.db, requireUuid(values, 'payment'));
    const input = SimulateDepositSchema.safeParse({
      depositCurrency: values.currency,
      network: values.network,
      amount: values.amount,
      fromAddress: values.from,
      riskScore: values['risk-score'],
      confirm: !values['no-confirm'],
    });
    if (!input.success) throw new UsageError(input.error.issues.map((i) => `--${String(i.path[0])}: ${i.message}`).join('\n'));
    const simulated = await deps.faucet.simulate(deps, payment, input.data);
    const status = 'status' in simulated.ingest ? simulated.ingest.status : simulated.ingest.outcome;
    return { json: { transactionId: simulated.txHash, depositStatus: status }, human: `transaction ${simulated.txHash}\ndeposit ${status}` };
  }),
  command('payment:choose-currency --payment <id> --currency <C> --network <N>', 'fix currency and network of a NEW payment, as the checkout does', async (ctx, values) => {
    const row = await chooseCurrency(ctx.deps(), requireUuid(values, 'payment'), {
      depositCurrency: (values.currency as string | undefined) ?? '',
      network: (values.network as string | undefined) ?? '',
    });
    return {
      json: {
        paymentId: row.id, depositCurrency: row.depositCurrency, network: row.network, walletAddress: row.walletAddress,
        destinationTag: row.destinationTag, expectedDepositAmount: row.expectedDepositAmount,
      },
      human: `send ${row.expectedDepositAmount} ${row.depositCurrency} on ${row.network} to ${row.walletAddress}${row.destinationTag ? ` (tag ${row.destinationTag})` : ''}`,
    };
  }),
];
