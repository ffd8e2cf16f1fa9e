/**
 * Simulated deposits on the sandbox chain (test helper, tRPC, CLI). A
 * simulated transfer is stored in `sandbox_transactions`, reported as SEEN to
 * deposit ingestion the way a production watcher would report it, and
 * settled by the `sandbox_settle_tx` job after KASSA_SANDBOX_CONFIRM_DELAY_S:
 * confirmed, or dropped when `confirm` is false (a chain failure).
 */
import { eq } from 'drizzle-orm';
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { sandboxTransactions } from '../../../db/schema.js';
import { enqueue } from '../../../jobs/enqueue.js';
import { KassaError, validationFailed } from '../../platform/errors.js';
import { isCrypto, decimalsOf, parseAmount, type Network } from '../../modules/money/index.js';
import {
  ingestDeposit,
  type DepositsDeps as Deps,
  type IngestResult,
  type SandboxFaucet,
  type SimulateDepositInput,
  type SimulatedDeposit,
} from '../../modules/deposits/index.js';
import type { PaymentRow } from '../../modules/payments/index.js';
import { deriveDepositAddress, networksSharingAddresses, sandboxTxHash, validateAddress, type ChainState } from '../../modules/networks/index.js';

/** The seed of the sandbox's made-up senders: a random one of its addresses sends each simulated deposit. */
const SENDERS_SEED = createHash('sha256').update('kassa sandbox senders').digest();

export async function simulateDeposit(deps: Deps, payment: PaymentRow, input: SimulateDepositInput): Promise<SimulatedDeposit> {
  if (!payment.walletAddress) {
    throw new KassaError(422, 'PAYMENT_HAS_NO_ADDRESS', `Payment ${payment.id} is NEW: choose its currency and network first.`);
  }
  const decimals = isCrypto(input.depositCurrency) ? decimalsOf(input.depositCurrency) : 18;
  const amount = parseAmount(input.amount, decimals);
  if (!amount.ok) throw validationFailed([{ field: 'amount', message: `must be a positive decimal string with at most ${decimals} decimals` }]);
  const network = input.network as Network;
  // A deposit on a network the address cannot be reached on (a BTC address on ETH) cannot happen.
  const reachable = networksSharingAddresses(payment.network as Network);
  if (!reachable.includes(network)) {
    throw new KassaError(422, 'ADDRESS_NOT_ON_NETWORK', `Payment ${payment.id}'s ${payment.network} address cannot receive on ${network}; it can on ${reachable.join(', ')}.`);
  }
  if (input.fromAddress) {
    const check = validateAddress(network, input.fromAddress);
    if (!check.valid) throw validationFailed([{ field: 'fromAddress', message: check.reason }]);
  }
  const fromAddress = input.fromAddress ?? deriveDepositAddress(SENDERS_SEED, network, randomInt(1, 1_000_000)).address;
  const txHash = sandboxTxHash(network, randomUUID());
  const now = deps.now();
  const transactionId = await deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(sandboxTransactions)
      .values({
        network,
        txHash,
        fromAddress,
        toAddress: payment.walletAddress!,
        destinationTag: payment.destinationTag,
        currency: input.depositCurrency,
        amount: amount.value.toFixed(),
        status: 'SEEN',
        willConfirm: input.confirm ?? true,
        riskScore: input.riskScore ?? null,
        createdAt: now,
      })
      .returning({ id: sandboxTransactions.id });
    const runAt = new Date(now.getTime() + deps.config.sandboxConfirmDelayS * 1000);
    await enqueue(tx, 'sandbox_settle_tx', { transactionId: row!.id }, { runAt, jobKey: `sandbox_settle_tx:${row!.id}` });
    return row!.id;
  });
  const ingest = await reportSandboxTx(deps, transactionId);
  return { transactionId, txHash, ingest };
}

/** Report a sandbox transaction's current state (or `as`, an earlier one) to deposit ingestion (idempotent). */
export async function reportSandboxTx(deps: Deps, transactionId: string, as?: ChainState): Promise<IngestResult> {
  const [row] = await deps.database.db.select().from(sandboxTransactions).where(eq(sandboxTransactions.id, transactionId));
  if (!row) return { outcome: 'IGNORED' };
  if (as) row.status = as;
  return ingestDeposit(deps, {
    network: row.network as Network,
    txHash: row.txHash,
    outputIndex: row.outputIndex,
    fromAddress: row.fromAddress,
    toAddress: row.toAddress,
    destinationTag: row.destinationTag,
    currency: row.currency,
    amount: row.amount,
    state: row.status as ChainState,
    confirmations: row.status === 'CONFIRMED' ? 6 : 0,
    dictatedRiskScore: row.riskScore,
  });
}

/** The sandbox chain's block: confirm (or drop) the transaction, then report it. */
export async function settleSandboxTx(deps: Deps, transactionId: string): Promise<IngestResult> {
  // A real chain shows a transaction (SEEN) before its block. The request that made this one
  // reports SEEN itself, but this job can run first (its time already past, a busy machine): the
  // deposit would then be born CONFIRMED (skipping AWAITING and its callback) or, when dropped,
  // never born at all. So report SEEN here first; ingestion ignores the repeat.
  await reportSandboxTx(deps, transactionId, 'SEEN');
  await deps.database.db.transaction(async (tx) => {
    const [row] = await tx.select().from(sandboxTransactions).where(eq(sandboxTransactions.id, transactionId)).for('update');
    if (row?.status === 'SEEN') {
      await tx
        .update(sandboxTransactions)
        .set({ status: row.willConfirm ? 'CONFIRMED' : 'DROPPED' })
        .where(eq(sandboxTransactions.id, transactionId));
    }
  });
  return reportSandboxTx(deps, transactionId);
}

/** The sandbox chain's faucet, as the deposits module's `SandboxFaucet` port. */
export const sandboxFaucet: SandboxFaucet = { simulate: simulateDeposit, settle: settleSandboxTx };
