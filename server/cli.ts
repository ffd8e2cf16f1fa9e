/**
 * The operator CLI (CONTRACT §9): `npm run kassa -- <command> [options]`.
 * With --json a command prints exactly one JSON object on stdout and nothing
 * else; human output otherwise.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createApiKey, createBusiness, createOperator, getBusiness } from './modules/businesses/index.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { SCOPES, type Scope } from './modules/money/index.js';
import { KeyMismatch, buildDeps, importSanctionsList, openKassaDatabase } from './compose.js';
import { SimulateDepositSchema } from './modules/deposits/index.js';
import { chooseCurrency, loadPaymentById } from './modules/payments/index.js';
import { listAttempts, listDeliveries, redeliver } from './modules/callbacks/index.js';

const USAGE = `Usage: npm run kassa -- <command> [options]

  business:create --name <n> [--withdrawal-callback-url <u>] [--payment-callback-url <u>] [--json]
  apikey:create   --business <id> --scopes ${SCOPES.join(',')} [--json]
  operator:create --name <n> --role admin|viewer [--json]
  deposit:simulate --payment <id> --currency <C> --network <N> --amount <a> [--from <address>] [--risk-score <0-10>] [--no-confirm] [--json]
      (sandbox) send a simulated deposit to a payment; it confirms after KASSA_SANDBOX_CONFIRM_DELAY_S
      (or is dropped with --no-confirm) once \`npm start\` runs the worker
  payment:choose-currency --payment <id> --currency <C> --network <N> [--json]
      fix currency and network of a NEW payment, as the checkout does
  callbacks:list [--business <id>] [--status PENDING|DELIVERED|EXPIRED] [--json]
      callback deliveries with their attempts (time, status code, latency, error)
  callback:redeliver --delivery <id> [--json]
      send a delivered or expired callback again (same webhook-id), on a new retry schedule
  sanctions:import <file|url> [--json]
      load the digital-currency addresses of OFAC's SDN list (sdn_advanced.xml) for screening; replaces the previous list
  migrate
`;

class UsageError extends Error {}

const httpUrl = z.url({ protocol: /^https?$/ });

function requireUuid(value: string | undefined, flag: string): string {
  if (!value || !z.guid().safeParse(value).success) throw new UsageError(`${flag} <uuid> is required.`);
  return value;
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'withdrawal-callback-url': { type: 'string' },
      'payment-callback-url': { type: 'string' },
      business: { type: 'string' },
      scopes: { type: 'string' },
      role: { type: 'string' },
      payment: { type: 'string' },
      currency: { type: 'string' },
      network: { type: 'string' },
      amount: { type: 'string' },
      from: { type: 'string' },
      'risk-score': { type: 'string' },
      'no-confirm': { type: 'boolean', default: false },
      delivery: { type: 'string' },
      status: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return;
  }
  const commands = ['business:create', 'apikey:create', 'operator:create', 'deposit:simulate', 'payment:choose-currency', 'callbacks:list', 'callback:redeliver', 'sanctions:import', 'migrate'];
  if (!commands.includes(command)) throw new UsageError(`Unknown command ${command}.`);

  const config = loadConfig();
  const { masterKey, opened, database } = await openKassaDatabase(config, { max: 2 });
  const print = (json: Record<string, unknown>, human: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(json)}\n` : `${human}\n`);
  try {
    switch (command) {
      case 'sanctions:import': {
        const source = positionals[0];
        if (!source) throw new UsageError('sanctions:import needs a file path or an http(s) URL of sdn_advanced.xml.');
        const counts = await importSanctionsList(database, source);
        print(
          { ...counts },
          `Imported ${counts.addresses} sanctioned addresses from ${source}: ${Object.entries(counts.perNetwork).map(([n, c]) => `${n} ${c}`).join(', ') || 'none on supported networks'}`,
        );
        break;
      }
      case 'migrate':
        print({ migrated: true }, 'Database migrated.');
        break;
      case 'business:create': {
        if (!values.name) throw new UsageError('--name is required.');
        const urls = {
          withdrawalCallbackUrl: values['withdrawal-callback-url'],
          paymentCallbackUrl: values['payment-callback-url'],
        };
        for (const [key, url] of Object.entries(urls)) {
          if (url !== undefined && !httpUrl.safeParse(url).success) throw new UsageError(`${key} must be an http(s) URL.`);
        }
        const created = await createBusiness(database.db, masterKey, { name: values.name, ...urls });
        const out = {
          businessId: created.business.id,
          apiKey: created.apiKey,
          apiSecret: created.apiSecret,
          callbackSecret: created.callbackSecret,
        };
        print(out, Object.entries(out).map(([k, v]) => `${k.padEnd(15)} ${v}`).join('\n'));
        break;
      }
      case 'apikey:create': {
        if (!values.business || !z.guid().safeParse(values.business).success) throw new UsageError('--business <uuid> is required.');
        const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
        if (scopes.length === 0 || unknown.length) throw new UsageError(`--scopes must list some of ${SCOPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}.`);
        await getBusiness(database.db, values.business);
        const key = await createApiKey(database.db, masterKey, values.business, scopes as Scope[]);
        const out = { businessId: values.business, apiKeyId: key.apiKeyId, apiKey: key.apiKey, apiSecret: key.apiSecret, scopes: key.scopes };
        print(out, `apiKey    ${key.apiKey}\napiSecret ${key.apiSecret}\nscopes    ${key.scopes.join(',')}`);
        break;
      }
      case 'operator:create': {
        if (!values.name) throw new UsageError('--name is required.');
        if (values.role !== 'admin' && values.role !== 'viewer') throw new UsageError('--role must be admin or viewer.');
        const op = await createOperator(database.db, values.name, values.role);
        print({ operatorId: op.operatorId, name: values.name, role: values.role, token: op.token }, `Bearer token (shown once): ${op.token}`);
        break;
      }
      case 'deposit:simulate': {
        const deps = buildDeps(config, database, masterKey);
        if (!config.sandbox || !deps.faucet) throw new UsageError('deposit:simulate exists only in sandbox.');
        const payment = await loadPaymentById(database.db, requireUuid(values.payment, '--payment'));
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
        print({ transactionId: simulated.txHash, depositStatus: status }, `transaction ${simulated.txHash}\ndeposit ${status}`);
        break;
      }
      case 'callbacks:list': {
        const status = values.status;
        if (status && !['PENDING', 'DELIVERED', 'EXPIRED'].includes(status)) throw new UsageError('--status must be PENDING, DELIVERED or EXPIRED.');
        const deliveries = await listDeliveries(database.db, {
          businessId: values.business ? requireUuid(values.business, '--business') : undefined,
          status,
          limit: 50,
        });
        const withAttempts = await Promise.all(deliveries.map(async (d) => ({ ...d, attemptLog: await listAttempts(database.db, d.id) })));
        print(
          { deliveries: withAttempts },
          withAttempts
            .map((d) => `${d.id} ${d.kind} ${d.status} attempts=${d.attempts} ${d.url}\n${d.attemptLog.map((a) => `    #${a.attempt} ${a.startedAt.toISOString()} ${a.statusCode ?? '-'} ${a.latencyMs}ms ${a.error ?? ''}`).join('\n')}`)
            .join('\n') || 'no callbacks',
        );
        break;
      }
      case 'callback:redeliver': {
        const deliveryId = requireUuid(values.delivery, '--delivery');
        await redeliver(buildDeps(config, database, masterKey), deliveryId);
        print({ deliveryId, status: 'PENDING' }, `callback ${deliveryId} queued for redelivery (the worker of \`npm start\` sends it)`);
        break;
      }
      case 'payment:choose-currency': {
        const deps = buildDeps(config, database, masterKey);
        const row = await chooseCurrency(deps, requireUuid(values.payment, '--payment'), {
          depositCurrency: values.currency ?? '',
          network: values.network ?? '',
        });
        print(
          { paymentId: row.id, depositCurrency: row.depositCurrency, network: row.network, walletAddress: row.walletAddress, destinationTag: row.destinationTag, expectedDepositAmount: row.expectedDepositAmount },
          `send ${row.expectedDepositAmount} ${row.depositCurrency} on ${row.network} to ${row.walletAddress}${row.destinationTag ? ` (tag ${row.destinationTag})` : ''}`,
        );
        break;
      }
    }
  } finally {
    await database.close();
    await opened.stop();
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof KeyMismatch) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    if (error instanceof UsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
