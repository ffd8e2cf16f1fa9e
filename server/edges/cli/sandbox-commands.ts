/** Sandbox helpers: a simulated deposit, and the checkout's currency choice from the shell. */
import { SimulateDepositSchema } from '../../modules/deposits/index.js';
import { chooseCurrency, loadPaymentById } from '../../modules/payments/index.js';
import { formatAmount, type CryptoCurrency } from '../../modules/money/index.js';
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
  command('payment:choose-currency --payment <id> --currency <C> --network <N>', '(sandbox) fix currency and network of a NEW payment, as the checkout does', async (ctx, values) => {
    const deps = ctx.deps();
    // Live addresses and prices come from the nodes and market sources the server holds, not the CLI.
    if (!deps.config.sandbox) throw new UsageError('payment:choose-currency exists only in sandbox; in live mode the customer chooses in the checkout.');
    const row = await chooseCurrency(deps, requireUuid(values, 'payment'), {
      depositCurrency: (values.currency as string | undefined) ?? '',
      network: (values.network as string | undefined) ?? '',
    });
    // As the API writes it: 0.01 ETH, not the stored 0.010000000000000000.
    const amount = formatAmount(row.expectedDepositAmount!, row.depositCurrency as CryptoCurrency, 'UP');
    return {
      json: {
        paymentId: row.id, depositCurrency: row.depositCurrency, network: row.network, walletAddress: row.walletAddress,
        destinationTag: row.destinationTag, expectedDepositAmount: amount,
      },
      human: `send ${amount} ${row.depositCurrency} on ${row.network} to ${row.walletAddress}${row.destinationTag ? ` (tag ${row.destinationTag})` : ''}`,
    };
  }),
];
