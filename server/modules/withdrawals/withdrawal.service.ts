/**
 * Withdrawals (CONTRACT §6): accept (rules, idempotency, balance debit in
 * one transaction), approve or reject, broadcast, and record the outcome
 * with its callback — each a checked transition with an event row.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { requestHash } from '../../platform/idempotency.js';
import type { Queryable } from '../../../db/client.js';
import { tableStore } from '../../../db/entity-store.js';
import { businesses, whitelistedAddresses, withdrawalApprovals, withdrawals } from '../../../db/schema.js';
import { enqueue } from '../../../jobs/enqueue.js';
import { getBusiness, type Business } from '../businesses/index.js';
import type { RiskAssessment } from '../compliance/index.js';
import type { Broadcast, BroadcastResult } from '../networks/index.js';
import type { WithdrawalsDeps as Deps } from './ports.js';
import { conflict, forbidden, KassaError, notFound, refusedForNow, validationFailed } from '../../platform/errors.js';
import { UUID_RE } from '../../platform/validate.js';
import { amend, recordCreated, transition as moveEntity, type EntityStore } from '../../platform/state-machine.js';
import { keyset } from '../../platform/cursor.js';
import { isInsufficientBalance, postEntries } from '../ledger/index.js';
import {
  CRYPTO_DECIMALS, FIAT_DECIMALS, NETWORK_FEES, isFiat, type CryptoCurrency, type FiatCurrency, type Network,
} from '../money/index.js';
import { Dec, formatAmount, parseAmount, roundTo } from '../money/index.js';
import type { PricedCurrency } from '../money/index.js';
import { isStablecoin, valuationRate } from '../money/index.js';
import type { CreateWithdrawalInput } from './create-withdrawal.schema.js';
import {
  APPROVAL_POLICIES, CALLBACK_STATUS, REFUNDING_OUTCOMES, WITHDRAWAL_MACHINE, WITHDRAWAL_MAX, assertDestination, rule,
  withdrawalMin, type ApprovalPolicy, type WithdrawalStatus,
} from './withdrawal.rules.js';
import { toWithdrawalRecord, type WithdrawalRecord, type WithdrawalRow } from './withdrawal-record.rules.js';

type WithdrawalSet = Partial<typeof withdrawals.$inferInsert>;
const withdrawalStore = tableStore<WithdrawalStatus, WithdrawalSet>({ entityType: 'withdrawal', table: withdrawals, machine: WITHDRAWAL_MACHINE });

const transition = (tx: Queryable, w: { id: string; status: string }, to: WithdrawalStatus, reason: string, at: Date, data: Record<string, unknown> = {}) =>
  moveEntity(tx, withdrawalStore, w, to, reason, at, { data });


export async function createWithdrawal(
  deps: Deps,
  caller: { businessId: string; business?: Business },
  input: CreateWithdrawalInput,
): Promise<WithdrawalRecord> {
  if (input.businessId.toLowerCase() !== caller.businessId) {
    throw forbidden('FORBIDDEN_BUSINESS', 'businessId does not match the business of the API key.');
  }
  try {
    return await createNew(deps, caller, input);
  } catch (error) {
    // A replay returns the withdrawal the first request made, whatever has changed since (rates or
    // screening out, the address taken off the whitelist, the node down): the refusal is only for a
    // new one. (A debit the balance cannot cover rolls its insert back: nothing to find then.)
    if (refusedForNow(error)) {
      const original = await replayed(deps.database.db, caller.businessId, input);
      if (original) return original;
    }
    throw error;
  }
}

/** The withdrawal an earlier request with this clientWithdrawalId made, or null; 409 when that request differed. */
async function replayed(db: Queryable, businessId: string, input: CreateWithdrawalInput): Promise<WithdrawalRecord | null> {
  const [existing] = await db
    .select()
    .from(withdrawals)
    .where(and(eq(withdrawals.businessId, businessId), eq(withdrawals.clientWithdrawalId, input.clientWithdrawalId)));
  if (!existing) return null;
  const same =
    existing.requestHash === requestHash(input) ||
    // A retry that writes out the fee payer the original left to the business's default (the one it was
    // given then, stored with it) asks for the same withdrawal. Not the other way round: a retry that
    // leaves it out asks for today's default, which may have changed.
    (input.feePayer === existing.feePayer && existing.requestHash === requestHash({ ...input, feePayer: undefined }));
  if (!same) {
    throw conflict('IDEMPOTENCY_CONFLICT', `clientWithdrawalId ${input.clientWithdrawalId} was already used with a different request.`);
  }
  return toWithdrawalRecord(existing, await approvalCount(db, existing.id));
}

async function createNew(deps: Deps, caller: { businessId: string; business?: Business }, input: CreateWithdrawalInput): Promise<WithdrawalRecord> {
  const db = deps.database.db;
  const business = caller.business ?? (await getBusiness(db, caller.businessId));
  assertDestination({ ...input, currency: input.withdrawCurrency }, 'withdrawCurrency', deps.networks);
  const currency = input.withdrawCurrency as CryptoCurrency;
  const network = input.network as Network;
  if (business.requireWhitelist) {
    const [listed] = await db
      .select({ id: whitelistedAddresses.id })
      .from(whitelistedAddresses)
      .where(
        and(
          eq(whitelistedAddresses.businessId, business.id),
          eq(whitelistedAddresses.currency, currency),
          eq(whitelistedAddresses.network, network),
          eq(whitelistedAddresses.address, input.address),
          eq(whitelistedAddresses.destinationTag, input.destinationTag ?? ''),
        ),
      );
    if (!listed) throw rule('ADDRESS_NOT_WHITELISTED', 'This business withdraws only to whitelisted addresses, and this one is not.', 'address');
  }

  const now = deps.now();
  const settlementCurrency = input.settlementCurrency ?? business.settlementCurrency;
  const displayCurrency: FiatCurrency = input.displayCurrency ?? (isFiat(business.settlementCurrency) ? business.settlementCurrency : 'EUR');
  const rateDisplay = await valuationRate(deps.rates, currency, displayCurrency, now);
  const rateSettlement = await valuationRate(deps.rates, currency, settlementCurrency as PricedCurrency, now);
  let estimated: Dec;
  let expectedDisplay: Dec;
  if (input.amount !== undefined) {
    const parsed = parseAmount(input.amount, CRYPTO_DECIMALS[currency]);
    if (!parsed.ok) throw validationFailed([{ field: 'amount', message: `must be a positive decimal string with at most ${CRYPTO_DECIMALS[currency]} decimals for ${currency}` }]);
    estimated = parsed.value;
    expectedDisplay = roundTo(estimated.mul(rateDisplay), displayCurrency);
  } else {
    const parsed = parseAmount(input.displayAmount!, FIAT_DECIMALS[displayCurrency]);
    if (!parsed.ok) throw validationFailed([{ field: 'displayAmount', message: `must be a positive decimal string with at most ${FIAT_DECIMALS[displayCurrency]} decimals for ${displayCurrency}` }]);
    expectedDisplay = parsed.value;
    // Rounded down: the payout never exceeds what was asked for.
    estimated = roundTo(expectedDisplay.div(rateDisplay), currency, 'DOWN');
  }
  const max = new Dec(WITHDRAWAL_MAX[currency]![network]!);
  if (estimated.gt(max)) throw rule('AMOUNT_ABOVE_MAXIMUM', `At most ${max.toFixed()} ${currency} on ${network} per withdrawal.`, 'amount');
  const min = withdrawalMin(currency, network);
  if (estimated.lt(min)) throw rule('AMOUNT_BELOW_MINIMUM', `At least ${min.toFixed()} ${currency} on ${network} per withdrawal.`, 'amount');

  const fee = new Dec(NETWORK_FEES[currency][network] ?? '0');
  const feePayer = input.feePayer ?? (business.defaultFeePayer as 'BUSINESS' | 'RECIPIENT');
  // The business pays the fee on top; a recipient-paid fee comes out of the amount sent.
  const gross = feePayer === 'BUSINESS' ? estimated.add(fee) : estimated;
  const deducted = roundTo(gross.mul(rateSettlement), settlementCurrency as FiatCurrency, 'UP');
  // A source that cannot answer throws ScreeningUnavailableError (503): nothing is created.
  const assessment: RiskAssessment = await deps.screening.screen(network, input.address);
  // A sanctioned destination is refused outright (CONTRACT §11); other high risk is accepted and
  // ends BLOCKED at broadcast, with its callback (CONTRACT §6).
  if (assessment.addressOwner.category === 'sanctions' && new Dec(assessment.riskScore).gte(business.riskBlockThreshold)) {
    throw rule('ADDRESS_SANCTIONED', `The destination address is on a sanctions list (${assessment.addressOwner.name}).`, 'address');
  }
  const approvalsRequired = APPROVAL_POLICIES[business.approvalPolicy as ApprovalPolicy] ?? 0;
  const hash = requestHash(input);

  return db.transaction(async (tx) => {
    const status: WithdrawalStatus = approvalsRequired > 0 ? 'PENDING_APPROVAL' : 'PROCESSING';
    const [row] = await tx
      .insert(withdrawals)
      .values({
        businessId: business.id,
        clientWithdrawalId: input.clientWithdrawalId,
        requestHash: hash,
        status,
        withdrawCurrency: currency,
        network,
        address: input.address,
        destinationTag: input.destinationTag ?? null,
        displayCurrency,
        settlementCurrency,
        feePayer,
        expectedDisplayAmount: expectedDisplay.toFixed(),
        estimatedWithdrawAmount: estimated.toFixed(),
        deductedSettlementAmount: deducted.toFixed(),
        withdrawFee: fee.toFixed(),
        rateDisplay: rateDisplay.toString(),
        rateSettlement: rateSettlement.toString(),
        approvalsRequired,
        riskScore: assessment.riskScore,
        riskAssessment: assessment,
        createdAt: now,
      })
      .onConflictDoNothing({ target: [withdrawals.businessId, withdrawals.clientWithdrawalId] })
      .returning();
    if (!row) {
      const original = await replayed(tx, business.id, input);
      if (!original) throw conflict('IDEMPOTENCY_CONFLICT', `clientWithdrawalId ${input.clientWithdrawalId} was already used with a different request.`);
      return original;
    }
    try {
      // The balance row is locked by this update until commit; a debit the balance cannot cover is refused.
      await postEntries(
        tx,
        [{ businessId: business.id, account: 'MERCHANT', currency: settlementCurrency, amount: deducted.neg().toFixed(), kind: 'WITHDRAWAL', withdrawalId: row.id }],
        now,
      );
    } catch (error) {
      if (isInsufficientBalance(error)) {
        throw rule('INSUFFICIENT_BALANCE', `The ${settlementCurrency} balance does not cover ${formatAmount(deducted, settlementCurrency as FiatCurrency)} ${settlementCurrency}.`, 'amount');
      }
      throw error;
    }
    await recordCreated(tx, withdrawalStore as EntityStore<Queryable, WithdrawalStatus, never>, row.id, status, 'requested', now);
    if (status === 'PROCESSING') await scheduleBroadcast(tx, deps, row.id, now);
    return toWithdrawalRecord(row, 0);
  });
}

async function scheduleBroadcast(tx: Queryable, deps: Deps, withdrawalId: string, now: Date) {
  const runAt = new Date(now.getTime() + deps.config.sandboxBroadcastDelayS * 1000);
  await enqueue(tx, 'broadcast_withdrawal', { withdrawalId }, { runAt, jobKey: `broadcast_withdrawal:${withdrawalId}` });
}

async function lockWithdrawal(tx: Queryable, withdrawalId: string): Promise<WithdrawalRow> {
  const [row] = UUID_RE.test(withdrawalId) ? await tx.select().from(withdrawals).where(eq(withdrawals.id, withdrawalId)).for('update') : [];
  if (!row) throw notFound(`Withdrawal ${withdrawalId} not found.`);
  return row;
}

/**
 * Record a final outcome: COMPLETED records the broadcast and fills the actual amounts;
 * FAILED, BLOCKED and REJECTED credit the debit back. The callback delivery
 * and its first job are created in the same transaction.
 */
async function finalize(
  tx: Queryable,
  deps: Deps,
  w: WithdrawalRow,
  outcome: 'COMPLETED' | 'FAILED' | 'BLOCKED' | 'REJECTED',
  reason: string,
  at: Date,
  result?: BroadcastResult,
) {
  const currency = w.withdrawCurrency as CryptoCurrency;
  if (outcome === 'COMPLETED') {
    // The broadcast happened before this transaction (a job's network I/O); here its result is recorded.
    if (!result) throw new Error(`Withdrawal ${w.id}: COMPLETED needs the broadcast's result.`);
    const fee = new Dec(w.withdrawFee);
    const estimated = new Dec(w.estimatedWithdrawAmount);
    const sent = w.feePayer === 'BUSINESS' ? estimated : estimated.sub(fee);
    const display = w.displayCurrency as FiatCurrency;
    const settlement = w.settlementCurrency as FiatCurrency;
    const gross = w.feePayer === 'BUSINESS' ? estimated.add(fee) : estimated;
    let depegDisplay = new Dec(0);
    let depegSettlement = new Dec(0);
    if (isStablecoin(currency)) {
      // Valued at the USD peg; the market difference is the pegging loss.
      const marketDisplay = await deps.rates.rate(currency, display, at);
      const marketSettlement = await deps.rates.rate(currency, settlement, at);
      depegDisplay = gross.mul(new Dec(w.rateDisplay).sub(marketDisplay));
      depegSettlement = (settlement as string) === currency ? new Dec(0) : gross.mul(new Dec(w.rateSettlement).sub(marketSettlement));
    }
    const actuals = {
      actualWithdrawAmount: formatAmount(sent, currency),
      actualDisplayAmount: formatAmount(sent.mul(w.rateDisplay), display),
      deductedSettlementAmount: formatAmount(w.deductedSettlementAmount, settlement),
      withdrawFee: formatAmount(fee, currency),
      displayFee: formatAmount(fee.mul(w.rateDisplay), display),
      displayRateDepegLossAmount: formatAmount(depegDisplay, display),
      settlementRateDepegLossAmount: formatAmount(depegSettlement, settlement),
    };
    await tx.update(withdrawals).set({ actuals, transactionId: result.txHash, completedAt: result.confirmedAt ?? at }).where(eq(withdrawals.id, w.id));
    Object.assign(w, { actuals, transactionId: result.txHash });
  } else {
    // A payout that failed on chain keeps its hash (the one on chain) for the record.
    await tx.update(withdrawals).set({ completedAt: at, ...(result ? { transactionId: result.txHash } : {}) }).where(eq(withdrawals.id, w.id));
    if (result) w.transactionId = result.txHash;
  }
  if (REFUNDING_OUTCOMES.includes(outcome)) {
    await postEntries(
      tx,
      [{ businessId: w.businessId, account: 'MERCHANT', currency: w.settlementCurrency, amount: w.deductedSettlementAmount, kind: `WITHDRAWAL_${outcome}`, withdrawalId: w.id }],
      at,
    );
  }
  await transition(tx, w, outcome, reason, at);
  // The end of a withdrawal is an event: its subscribers (the withdrawal callback) write in this transaction.
  const event = { type: 'withdrawal.ended', withdrawal: w, outcome, callbackStatus: CALLBACK_STATUS[outcome]!, at } as const;
  for (const subscriber of deps.withdrawalSubscribers) await subscriber(tx, event);
}

/** What a PROCESSING withdrawal sends: the estimate, less the fee when the recipient pays it. Idempotent per id. */
export function withdrawalBroadcast(w: WithdrawalRow): Broadcast {
  const estimated = new Dec(w.estimatedWithdrawAmount);
  const sent = w.feePayer === 'BUSINESS' ? estimated : estimated.sub(w.withdrawFee);
  return { id: `withdrawal:${w.id}`, network: w.network as Network, currency: w.withdrawCurrency, toAddress: w.address, destinationTag: w.destinationTag, amount: sent.toFixed() };
}

/** A withdrawal as it is now, unlocked: what a job reads before its network I/O. */
export async function peekWithdrawal(db: Queryable, withdrawalId: string): Promise<{ withdrawal: WithdrawalRow; blockThreshold: string } | null> {
  if (!UUID_RE.test(withdrawalId)) return null;
  const [row] = await db
    .select({ withdrawal: withdrawals, blockThreshold: businesses.riskBlockThreshold })
    .from(withdrawals)
    .innerJoin(businesses, eq(businesses.id, withdrawals.businessId))
    .where(eq(withdrawals.id, withdrawalId));
  return row ?? null;
}

/**
 * Record a final outcome in its own transaction, if the withdrawal is still
 * in one of `from` (a job or a helper may race an operator): the status,
 * actuals, balance credit-back and callback. Returns the status it ends in.
 */
export async function recordOutcome(
  deps: Deps,
  withdrawalId: string,
  from: readonly WithdrawalStatus[],
  outcome: 'COMPLETED' | 'FAILED' | 'BLOCKED',
  reason: string,
  result?: BroadcastResult,
): Promise<{ status: WithdrawalStatus; record: WithdrawalRecord }> {
  return deps.database.db.transaction(async (tx) => {
    const w = await lockWithdrawal(tx, withdrawalId);
    if (from.includes(w.status as WithdrawalStatus)) await finalize(tx, deps, w, outcome, reason, deps.now(), result);
    return { status: w.status as WithdrawalStatus, record: toWithdrawalRecord(w, await approvalCount(tx, w.id)) };
  });
}

/**
 * A live payout is on its way and not final yet (its confirmations are to come): the withdrawal
 * stays PROCESSING and shows the hash from now on, with an event. Idempotent: a retry of the job
 * that sent it (the same transaction) changes nothing. Its outcome comes with `recordSettlement`.
 */
export async function recordSent(deps: Deps, withdrawalId: string, txHash: string): Promise<{ status: WithdrawalStatus; record: WithdrawalRecord }> {
  return deps.database.db.transaction(async (tx) => {
    const w = await lockWithdrawal(tx, withdrawalId);
    if (w.status === 'PROCESSING' && w.transactionId === null) {
      await amendWithdrawal(tx, w, 'broadcast: final once its block is deep enough', deps.now(), { transactionId: txHash }, { transactionId: txHash });
      w.transactionId = txHash;
    }
    return { status: w.status as WithdrawalStatus, record: toWithdrawalRecord(w, await approvalCount(tx, w.id)) };
  });
}

/** A sent payout, final on chain: its hash, whether it succeeded, its block's time. */
export type SettledPayout = { txHash: string; success: boolean; at: Date };

/**
 * A sent payout is final on chain: COMPLETED at its block's time, or FAILED (balance credited
 * back) when the chain ran it and it failed (a token transfer that reverted: nothing reached the
 * address). Only a withdrawal still PROCESSING moves: the status it moved to, or null.
 */
export async function recordSettlement(
  deps: Deps,
  withdrawalId: string,
  settled: SettledPayout,
): Promise<'COMPLETED' | 'FAILED' | null> {
  return deps.database.db.transaction(async (tx) => {
    const w = await lockWithdrawal(tx, withdrawalId);
    if (w.status !== 'PROCESSING') return null;
    // The hash on chain, whether or not its job recorded it (or the version a fee bump left in force).
    const result = { txHash: settled.txHash, confirmedAt: settled.at };
    if (settled.success) {
      await finalize(tx, deps, w, 'COMPLETED', 'confirmed on chain', deps.now(), result);
    } else {
      await finalize(tx, deps, w, 'FAILED', `its transaction ${settled.txHash} failed on chain: nothing was paid`, deps.now(), result);
    }
    return settled.success ? 'COMPLETED' : 'FAILED';
  });
}

/**
 * An operator approves (PENDING_APPROVAL → PROCESSING once enough distinct
 * operators approved) or rejects (→ REJECTED, balance credited back, FAILED callback).
 */
export async function decideWithdrawal(
  deps: Deps,
  withdrawalId: string,
  operator: { id: string; name: string },
  decision: 'APPROVE' | 'REJECT',
  /** Why (a rejection): kept in the withdrawal's event. */
  note?: string,
) {
  return deps.database.db.transaction(async (tx) => {
    const w = await lockWithdrawal(tx, withdrawalId);
    if (w.status !== 'PENDING_APPROVAL') {
      throw new KassaError(409, 'NOT_PENDING_APPROVAL', `Withdrawal ${withdrawalId} is ${w.status}, not waiting for approval.`);
    }
    const at = deps.now();
    const inserted = await tx
      .insert(withdrawalApprovals)
      .values({ withdrawalId, operatorId: operator.id, decision, at })
      .onConflictDoNothing()
      .returning();
    if (inserted.length === 0) {
      throw new KassaError(409, 'ALREADY_DECIDED', `Operator ${operator.name} already decided on withdrawal ${withdrawalId}; a second approval must come from a different operator.`);
    }
    if (decision === 'REJECT') {
      await finalize(tx, deps, w, 'REJECTED', `rejected by ${operator.name}${note ? `: ${note}` : ''}`, at);
    } else {
      const n = await approvalCount(tx, withdrawalId);
      // An approval is an event without a move: the status stays until enough operators approved.
      const status = w.status as WithdrawalStatus;
      await withdrawalStore.record(tx, { id: withdrawalId, from: status, to: status, reason: `approved by ${operator.name} (${n}/${w.approvalsRequired})`, at, data: {} });
      if (n >= w.approvalsRequired) {
        await transition(tx, w, 'PROCESSING', 'approved', at);
        await scheduleBroadcast(tx, deps, w.id, at);
      }
    }
    return toWithdrawalRecord(w, await approvalCount(tx, w.id));
  });
}

/** Records of several withdrawals with their approval counts, in one query. */
async function withApprovalCounts(db: Queryable, rows: WithdrawalRow[]): Promise<WithdrawalRecord[]> {
  if (rows.length === 0) return [];
  const counts = await db
    .select({ withdrawalId: withdrawalApprovals.withdrawalId, n: sql<number>`count(*)::int` })
    .from(withdrawalApprovals)
    .where(and(inArray(withdrawalApprovals.withdrawalId, rows.map((r) => r.id)), eq(withdrawalApprovals.decision, 'APPROVE')))
    .groupBy(withdrawalApprovals.withdrawalId);
  const byId = new Map(counts.map((c) => [c.withdrawalId, c.n]));
  return rows.map((r) => toWithdrawalRecord(r, byId.get(r.id) ?? 0));
}

async function approvalCount(db: Queryable, withdrawalId: string): Promise<number> {
  const [{ n }] = (await db.execute(
    sql`select count(*)::int as n from withdrawal_approvals where withdrawal_id = ${withdrawalId} and decision = 'APPROVE'`,
  )) as unknown as [{ n: number }];
  return n;
}

export async function getWithdrawal(deps: Deps, businessId: string | null, withdrawalId: string): Promise<WithdrawalRecord> {
  const [row] = UUID_RE.test(withdrawalId)
    ? await deps.database.db.select().from(withdrawals).where(eq(withdrawals.id, withdrawalId.toLowerCase()))
    : [];
  if (!row || (businessId && row.businessId !== businessId)) throw notFound(`Withdrawal ${withdrawalId} not found.`);
  return toWithdrawalRecord(row, await approvalCount(deps.database.db, row.id));
}

export async function listWithdrawals(
  deps: Deps,
  businessId: string | null,
  query: { status?: string; clientWithdrawalId?: string; limit: number; cursor?: string },
): Promise<{ items: WithdrawalRecord[]; nextCursor: string | null }> {
  const page = keyset(withdrawals, query);
  const filters = [
    businessId ? eq(withdrawals.businessId, businessId) : undefined,
    query.status ? eq(withdrawals.status, query.status) : undefined,
    query.clientWithdrawalId ? eq(withdrawals.clientWithdrawalId, query.clientWithdrawalId) : undefined,
  ];
  const rows = await deps.database.db.select().from(withdrawals).where(page.where(...filters)).orderBy(...page.orderBy).limit(page.limit);
  const { page: items, nextCursor } = page.page(rows);
  return { items: await withApprovalCounts(deps.database.db, items), nextCursor };
}

/** A withdrawal's columns changed, its status kept (platform/state-machine.ts `amend`). */
export const amendWithdrawal = (tx: Queryable, w: { id: string; status: string }, reason: string, at: Date, set: WithdrawalSet, data: Record<string, unknown> = {}) =>
  amend(tx, withdrawalStore, w, reason, at, { set, data });
