/**
 * Deposits: ingestion of chain reports, compliance decisions, crediting,
 * refunds and the payment's status (CONTRACT §5). Every function runs in one
 * transaction that locks the payment row first, then the deposit, so two
 * deposits to one payment (or a replayed report) serialize instead of losing
 * an update.
 */
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { deposits, events, payments } from '../../../db/schema.js';
import { networksSharingAddresses, TOKEN_CONTRACTS, type DepositReport } from '../networks/index.js';
import { ScreeningUnavailableError, type RiskAssessment } from '../compliance/index.js';
import type { DepositsDeps as Deps, IngestResult } from './ports.js';
import { KassaError, notFound } from '../../platform/errors.js';
import {
  DELISTED_CURRENCIES,
  Dec,
  isCrypto,
  isStablecoin,
  valuationRates,
  type CryptoCurrency,
  type DepositStatus,
  type FiatCurrency,
  type LockedRates,
  type PaymentStatus,
  type PricedCurrency,
} from '../money/index.js';
import { depositReversal, postEntries } from '../ledger/index.js';
import { recordDepositCreated, transitionDeposit } from './deposit-transitions.js';
import { valueDeposit } from './deposit-valuation.rules.js';
import { FINAL_PAYMENT_STATUSES, coverage, quoteUp, reevaluatePayment, type PaymentRow } from '../payments/index.js';
import { cancelUnsentRefund, networkFee, refundDeposit, releaseRefund, sentBack } from './refund.service.js';

type DepositRow = typeof deposits.$inferSelect;


async function lockPayment(tx: Queryable, paymentId: string): Promise<PaymentRow> {
  const [row] = await tx.select().from(payments).where(eq(payments.id, paymentId)).for('update');
  if (!row) throw notFound(`Payment ${paymentId} not found.`);
  return row;
}

async function findDeposit(tx: Queryable, report: Pick<DepositReport, 'network' | 'txHash' | 'outputIndex'>, lock: boolean) {
  const query = tx
    .select()
    .from(deposits)
    .where(and(eq(deposits.network, report.network), eq(deposits.txHash, report.txHash), eq(deposits.outputIndex, report.outputIndex)));
  const [row] = lock ? await query.for('update') : await query;
  return row ?? null;
}

const isRestricted = (currency: string) => (DELISTED_CURRENCIES as readonly string[]).includes(currency);
const matchesPayment = (p: PaymentRow, currency: string, network: string) => p.depositCurrency === currency && p.network === network;

/** Rates a deposit is valued with: the payment's locked rates (FIXED, in time, right currency) or the market now. */
async function depositRates(deps: Deps, p: PaymentRow, currency: string, network: string, at: Date) {
  const display = p.displayCurrency as FiatCurrency;
  const settlement = p.settlementCurrency as PricedCurrency;
  const fixed = p.rateType === 'FIXED' && matchesPayment(p, currency, network) && p.lockedRate && p.expiresAt && at < p.expiresAt;
  const market = async (): Promise<LockedRates> => {
    const c = currency as PricedCurrency;
    const [d, s, u] = await Promise.all([deps.rates.rate(c, display, at), deps.rates.rate(c, settlement, at), deps.rates.rate(c, 'EUR', at)]);
    return { display: d, settlement: currency === settlement ? new Dec(1) : s, uniform: u };
  };
  if (fixed) {
    const rates = { display: new Dec(p.lockedRate!), settlement: new Dec(p.lockedRateSettlement!), uniform: new Dec(p.lockedRateUniform!) };
    // A locked stablecoin rate is the peg too: its depeg loss is measured against today's market.
    return { source: 'FIXED' as const, rates, market: isStablecoin(currency) ? await market() : undefined };
  }
  if (!isCrypto(currency)) return { source: 'MARKET' as const, rates: await market(), market: undefined };
  const rates = await valuationRates(deps.rates, currency, display, settlement, at);
  return { source: 'MARKET' as const, rates, market: isStablecoin(currency) ? await market() : undefined };
}

const ratesOf = (d: DepositRow): LockedRates => ({
  display: new Dec(d.rateDisplay),
  settlement: new Dec(d.rateSettlement),
  uniform: new Dec(d.rateUniform),
});

function revalue(p: PaymentRow, d: DepositRow, creditedAmount: Dec, market?: LockedRates) {
  return valueDeposit({
    currency: d.depositCurrency,
    amount: new Dec(d.amount),
    creditedAmount,
    displayCurrency: d.displayCurrency as FiatCurrency,
    settlementCurrency: d.settlementCurrency as FiatCurrency,
    rates: ratesOf(d),
    marketRates: market,
    fees: { serviceFeePercent: p.serviceFeePercent, userFeeSharePercent: p.userFeeSharePercent },
  });
}

/** The initial status of a newly seen deposit: compliance first, then whether Kassa can take it. */
function initialStatus(p: PaymentRow, report: { currency: string; network: string; state: DepositReport['state'] }, score: Dec, unscreened: boolean): DepositStatus {
  // Not screened is never a pass: an operator decides (compliance:decide).
  if (unscreened) return 'COMPLIANCE_REVIEW';
  if (score.gte(p.riskBlockThreshold)) return 'BLOCKED';
  if (score.gte(p.riskReviewThreshold)) return 'COMPLIANCE_REVIEW';
  if (isRestricted(report.currency) || !matchesPayment(p, report.currency, report.network)) return 'UNPROCESSABLE';
  return report.state === 'CONFIRMED' ? 'CONFIRMED' : 'UNCONFIRMED';
}

/** Full refund of a deposit Kassa cannot take. */
async function refundUnprocessable(tx: Queryable, d: DepositRow, at: Date) {
  const reason = isRestricted(d.depositCurrency) ? 'RESTRICTED_CURRENCY' : 'CURRENCY_MISMATCH';
  await refundDeposit(tx, d, { type: 'FULL', reason, amount: new Dec(d.amount) }, at);
}

async function block(tx: Queryable, d: DepositRow, at: Date) {
  await refundDeposit(tx, d, { type: 'FULL', reason: 'ILLICIT_DEPOSIT', amount: new Dec(d.amount) }, at);
}

/**
 * The deposit with `creditedAmount` credited (0: nothing), revalued (a stablecoin's depeg loss at
 * today's market) and stored, on its row and on `d`, with `also`.
 */
async function storeCredit(tx: Queryable, deps: Deps, p: PaymentRow, d: DepositRow, creditedAmount: Dec, also: Partial<DepositRow>) {
  const market = isStablecoin(d.depositCurrency)
    ? (await depositRates(deps, p, d.depositCurrency, d.network, d.receivedAt)).market
    : undefined;
  const set = { ...also, credited: creditedAmount.gt(0), creditedAmount: creditedAmount.toFixed(), amounts: revalue(p, d, creditedAmount, market) };
  await tx.update(deposits).set(set).where(eq(deposits.id, d.id));
  Object.assign(d, set);
  return set;
}

/**
 * A confirmed deposit is credited: to the payment (unless it is a follow-up
 * the business refunds), with any excess over the price refunded under
 * EXCESS_REFUND, and to the merchant's balance in the settlement currency.
 */
async function credit(tx: Queryable, deps: Deps, p: PaymentRow, d: DepositRow, at: Date) {
  // Credited once already and reversed (it left the chain, and is back): judged as it was then,
  // not as a follow-up of a payment covered meanwhile; but a payment that has since expired or
  // been blocked takes no more money, so there it is a follow-up like any other.
  const closed = p.status === 'EXPIRED' || p.status === 'BLOCKED';
  const followUp =
    d.creditReversedAt !== null && !closed ? d.followUp : p.type === 'ONE_TIME' && FINAL_PAYMENT_STATUSES.includes(p.status as PaymentStatus);
  // What Kassa holds of it: all of it, unless it came back after a refund of it was sent.
  const returned = await sentBack(tx, d.id);
  const amount = new Dec(d.amount).sub(returned);
  if (followUp && p.refundFollowUpDeposits) {
    await tx.update(deposits).set({ followUp: true }).where(eq(deposits.id, d.id));
    await refundDeposit(tx, d, { type: 'FULL', reason: 'FOLLOW_UP_DEPOSIT', amount }, at);
    return;
  }
  let creditedAmount = amount;
  if (!followUp && p.type === 'ONE_TIME' && p.overpaymentPolicy === 'EXCESS_REFUND') {
    const { unit, expected, of } = coverage(p);
    if (expected) {
      const others = await tx
        .select()
        .from(deposits)
        .where(and(eq(deposits.paymentId, p.id), eq(deposits.credited, true), eq(deposits.followUp, false)));
      const remaining = expected.sub(others.reduce((sum, o) => sum.add(of(o)), new Dec(0)));
      const remainingInCrypto = unit === 'DISPLAY' ? remaining.div(d.rateDisplay) : remaining;
      // What is still owed, in the deposit's currency as a quote shows it (rounded up to at most 8
      // decimals): paying exactly the quoted amount is then never above it, in 18-decimal ETH too.
      const cap = Dec.max(0, unit === 'DISPLAY' ? quoteUp(remainingInCrypto, d.depositCurrency as CryptoCurrency) : remainingInCrypto);
      // Back on the chain after its refund was sent: a deposit has one refund, so what Kassa
      // still holds of it is credited rather than left neither credited nor returned.
      if (cap.lt(amount) && returned.isZero()) creditedAmount = cap;
    }
  }
  const { credited, amounts } = await storeCredit(tx, deps, p, d, creditedAmount, { followUp });
  if (credited) {
    await postEntries(
      tx,
      [
        { businessId: p.businessId, account: 'MERCHANT', currency: d.settlementCurrency, amount: amounts.settlementPayableAmount!, kind: 'DEPOSIT', depositId: d.id },
        { businessId: p.businessId, account: 'FEES', currency: d.settlementCurrency, amount: amounts.settlementServiceFee!, kind: 'SERVICE_FEE', depositId: d.id },
      ],
      at,
    );
  }
  const excess = amount.sub(creditedAmount);
  if (excess.gt(0)) await refundDeposit(tx, d, { type: 'PARTIAL', reason: 'OVERPAYMENT', amount: excess }, at);
}

/**
 * A confirmed deposit the chain took back for good (a reorganisation, and it did not come back):
 * FAILED, and all the ledger holds for it reversed by new entries, never an edit (CONTRACT §10).
 * The merchant's balance may go below zero: the merchant owes it, and withdrawals wait. A refund
 * or sweep already sent from it is not undone here: the deposit's event and `credit_reversed_at`
 * show it to an operator.
 */
async function reverseCredit(tx: Queryable, deps: Deps, p: PaymentRow, d: DepositRow, at: Date) {
  // Confirmed but never credited (a refunded follow-up): nothing to take back.
  if (!d.credited) return transitionDeposit(tx, d, 'FAILED', 'reorganised off the chain after it confirmed', at);
  const reversal = await depositReversal(tx, d.id);
  await storeCredit(tx, deps, p, d, new Dec(0), { creditReversedAt: at });
  await transitionDeposit(tx, d, 'FAILED', 'reorganised off the chain after it was credited', at, {
    reversed: reversal.map(({ account, currency, amount }) => ({ account, currency, amount })),
  });
  await postEntries(tx, reversal, at);
}

/**
 * A deposit that had left the chain is back on it (mined again after a reorganisation; EVM reports
 * it SEEN again). Its sender was screened again before this transaction (`screened`: it may have
 * been listed meanwhile; the stored screening stays when the source could not answer). A FAILED
 * one is judged again as when it was first seen, keeping an operator's approval unless the sender
 * must now be blocked: review, unconfirmed, confirmed and credited (once more after a reversal: the
 * ledger nets to one credit), or blocked. An UNPROCESSABLE one gets back the refund its leaving
 * cancelled, or is blocked (nothing is sent to a listed address). A refund already sent is counted
 * (`refundDeposit`), so nothing is sent back twice. BLOCKED stays as it is, with the screening that
 * blocked it: its funds are frozen either way.
 */
async function returnToChain(tx: Queryable, deps: Deps, p: PaymentRow, d: DepositRow, at: Date, screened: Screening) {
  if (d.status !== 'FAILED' && d.status !== 'UNPROCESSABLE') return;
  // A screening source that could not answer leaves the stored screening in force.
  if (!screened.unscreened) {
    const { unscreened: _, ...riskAssessment } = screened;
    const set = { riskScore: screened.riskScore, riskAssessment };
    await tx.update(deposits).set(set).where(eq(deposits.id, d.id));
    Object.assign(d, set);
  }
  const score = new Dec(d.riskScore);
  const mustBlock = score.gte(p.riskBlockThreshold);
  const reason = 'back on the chain after it was dropped';
  if (d.status === 'UNPROCESSABLE') {
    // Its sender listed meanwhile: blocked and frozen, as a first sighting would have been.
    if (!mustBlock) return refundUnprocessable(tx, d, at);
    await transitionDeposit(tx, d, 'BLOCKED', `${reason}; its sender is now at risk ${d.riskScore}`, at, { riskScore: d.riskScore });
    return block(tx, d, at);
  }
  const unscreened = (d.riskAssessment as { addressOwner?: { category?: string } }).addressOwner?.category === UNSCREENED;
  const chain = { currency: d.depositCurrency, network: d.network, state: d.chainStatus as DepositReport['state'] };
  // An operator who approved it once is not asked again (judged as a risk of 0 would be).
  const approved = !mustBlock && (await approvedByOperator(tx, d.id));
  const status = initialStatus(p, chain, approved ? new Dec(0) : score, unscreened && !approved);
  await transitionDeposit(tx, d, status, reason, at, { riskScore: d.riskScore });
  if (status === 'BLOCKED') await block(tx, d, at);
  else if (status === 'UNPROCESSABLE') await refundUnprocessable(tx, d, at);
  else if (status === 'CONFIRMED') await credit(tx, deps, p, d, at);
}

/**
 * Whether an operator let the deposit out of compliance review: only `decideCompliance` APPROVE
 * moves it from there to UNCONFIRMED, CONFIRMED or UNPROCESSABLE (the chain alone never does).
 */
async function approvedByOperator(tx: Queryable, depositId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: events.id })
    .from(events)
    .where(
      and(
        eq(events.entityType, 'deposit'),
        eq(events.entityId, depositId),
        eq(events.fromStatus, 'COMPLIANCE_REVIEW'),
        inArray(events.toStatus, ['UNCONFIRMED', 'CONFIRMED', 'UNPROCESSABLE']),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/** Move a deposit out of its pending state according to the chain (after review or a new report). */
async function followChain(tx: Queryable, deps: Deps, p: PaymentRow, d: DepositRow, at: Date, reason: string) {
  if (d.chainStatus === 'DROPPED') return transitionDeposit(tx, d, 'FAILED', 'dropped from the chain', at);
  if (d.chainStatus === 'CONFIRMED') {
    await transitionDeposit(tx, d, 'CONFIRMED', reason, at);
    return credit(tx, deps, p, d, at);
  }
  if (d.status !== 'UNCONFIRMED') await transitionDeposit(tx, d, 'UNCONFIRMED', reason, at);
}

/**
 * The sender's assessment; when a screening source cannot answer, an explicit
 * "not screened" one (score 0.0, owner category `unscreened`) that sends the
 * deposit to COMPLIANCE_REVIEW.
 */
type Screening = RiskAssessment & { unscreened?: true };

/** The owner category of the assessment stored when no screening source could answer. */
const UNSCREENED = 'unscreened';

async function screenSender(deps: Deps, report: DepositReport): Promise<Screening> {
  try {
    return await deps.screening.screen(report.network, report.fromAddress, report.dictatedRiskScore ?? undefined);
  } catch (error) {
    if (!(error instanceof ScreeningUnavailableError)) throw error;
    return {
      riskScore: '0.0',
      addressOwner: { name: 'Not screened: a screening source could not answer', category: UNSCREENED },
      sourceRiskEntities: [],
      destinationRiskEntities: [],
      unscreened: true,
    };
  }
}

/**
 * A report moves a deposit on only to a later chain state: SEEN, then CONFIRMED or DROPPED, and
 * DROPPED after CONFIRMED (a reorganisation deeper than the confirmations); or back onto the
 * chain after DROPPED (SEEN or CONFIRMED: `returnToChain`).
 */
const CHAIN_ORDER = { SEEN: 0, CONFIRMED: 1, DROPPED: 2 } as const;
const movesOn = (from: DepositReport['state'], to: DepositReport['state']) =>
  (from === 'DROPPED' && to !== 'DROPPED') || CHAIN_ORDER[to] > CHAIN_ORDER[from];

/**
 * Ingest one chain report. Idempotent per (network, txHash, outputIndex):
 * a replay changes nothing; a later state (confirmed, dropped) moves the
 * deposit on.
 */
export async function ingestDeposit(deps: Deps, report: DepositReport): Promise<IngestResult> {
  const existing = await findDeposit(deps.database.db, report, false);
  // Screening is a call to an outside provider: done before the transaction, for new deposits and
  // for one back on the chain after it was dropped (its sender may have been listed meanwhile).
  const returning = existing?.chainStatus === 'DROPPED' && report.state !== 'DROPPED';
  const screened: Screening | null = existing && !returning ? null : await screenSender(deps, report);
  try {
    return await ingestIn(deps, report, existing, screened);
  } catch (error) {
    // Dropped between the read above and the transaction's lock: screened now, and once more.
    if (!(error instanceof ScreenFirst)) throw error;
    return ingestIn(deps, report, existing, await screenSender(deps, report));
  }
}

/** Thrown inside the transaction for a deposit back on the chain whose sender was not screened before it. */
class ScreenFirst extends Error {}

async function ingestIn(deps: Deps, report: DepositReport, existing: DepositRow | null, assessment: Screening | null): Promise<IngestResult> {
  return deps.database.db.transaction(async (tx) => {
    const at = deps.now();
    let payment: PaymentRow | undefined;
    if (existing) {
      payment = await lockPayment(tx, existing.paymentId);
    } else {
      const tag = report.destinationTag ?? null;
      const [row] = await tx
        .select()
        .from(payments)
        .where(
          and(
            // Any network the address can receive on: a payment's address is found from a sibling
            // network too (ETH and BSC share one), and the deposit is then another network's.
            inArray(payments.network, networksSharingAddresses(report.network)),
            eq(payments.walletAddress, report.toAddress),
            tag ? eq(payments.destinationTag, tag) : isNull(payments.destinationTag),
          ),
        )
        .for('update');
      if (!row) return { outcome: 'UNMATCHED' as const };
      payment = row;
    }
    const p = payment;
    // Re-read under the payment's lock: a report racing with the first one for the same output sees its result.
    const current = await findDeposit(tx, report, true);
    if (!current && report.state === 'DROPPED') return { outcome: 'IGNORED' as const };
    if (current) {
      const from = current.chainStatus as DepositReport['state'];
      if (!movesOn(from, report.state)) {
        return { outcome: 'REPLAY' as const, depositId: current.id, status: current.status as DepositStatus, paymentId: p.id };
      }
      await tx.update(deposits).set({ chainStatus: report.state }).where(eq(deposits.id, current.id));
      current.chainStatus = report.state;
      // A refund waits for its deposit to confirm on chain (refund.service.ts).
      if (report.state === 'CONFIRMED') await releaseRefund(tx, current.id);
      else if (report.state === 'DROPPED') await cancelUnsentRefund(tx, current.id, at);
      if (from === 'DROPPED') {
        if (!assessment) throw new ScreenFirst();
        await returnToChain(tx, deps, p, current, at, assessment);
      } else if (current.status === 'UNCONFIRMED') {
        await followChain(tx, deps, p, current, at, report.state === 'CONFIRMED' ? 'confirmed on chain' : 'dropped');
      } else if (current.status === 'COMPLIANCE_REVIEW' && report.state === 'DROPPED') {
        await transitionDeposit(tx, current, 'FAILED', 'dropped from the chain during review', at);
      } else if (current.status === 'CONFIRMED' && report.state === 'DROPPED') {
        await reverseCredit(tx, deps, p, current, at);
      }
      await reevaluatePayment(tx, deps, p, at, `deposit ${current.id} ${current.status.toLowerCase()}`);
      return { outcome: 'UPDATED' as const, depositId: current.id, status: current.status as DepositStatus, paymentId: p.id };
    }

    const score = new Dec(assessment!.riskScore);
    const { unscreened, ...riskAssessment } = assessment!;
    const status = initialStatus(p, report, score, unscreened === true);
    const valuation = await depositRates(deps, p, report.currency, report.network, at);
    const amount = new Dec(report.amount);
    const [inserted] = await tx
      .insert(deposits)
      .values({
        paymentId: p.id,
        businessId: p.businessId,
        network: report.network,
        txHash: report.txHash,
        outputIndex: report.outputIndex,
        status,
        chainStatus: report.state,
        fromAddress: report.fromAddress,
        toAddress: report.toAddress,
        destinationTag: report.destinationTag ?? null,
        depositCurrency: report.currency,
        amount: amount.toFixed(),
        // A chain that does not report it (the sandbox): the network's fee for its own coin; a token's sender pays
        // gas in the chain's coin, none in the token, so 0 (as the live EVM scanner reports).
        onChainFee: report.onChainFee ?? (TOKEN_CONTRACTS[report.network]?.[report.currency] ? '0' : networkFee(report.currency, report.network).toFixed()),
        riskScore: assessment!.riskScore,
        riskAssessment,
        rateSource: valuation.source,
        displayCurrency: p.displayCurrency!,
        settlementCurrency: p.settlementCurrency,
        rateDisplay: valuation.rates.display.toString(),
        rateSettlement: valuation.rates.settlement.toString(),
        rateUniform: valuation.rates.uniform.toString(),
        receivedAt: at,
        confirmedAt: status === 'CONFIRMED' ? at : null,
        createdAt: at,
      })
      .returning();
    const d = inserted!;
    const amounts = revalue(p, d, new Dec(0), valuation.market);
    await tx.update(deposits).set({ amounts }).where(eq(deposits.id, d.id));
    d.amounts = amounts;
    await recordDepositCreated(tx, d.id, status, `seen on chain (risk ${assessment!.riskScore})`, at, { txHash: report.txHash });
    if (status === 'BLOCKED') await block(tx, d, at);
    else if (status === 'UNPROCESSABLE') await refundUnprocessable(tx, d, at);
    else if (status === 'CONFIRMED') await credit(tx, deps, p, d, at);
    await reevaluatePayment(tx, deps, p, at, `deposit ${d.id} ${status.toLowerCase()}`);
    return { outcome: 'CREATED' as const, depositId: d.id, status: d.status as DepositStatus, paymentId: p.id };
  });
}

export type ComplianceDecision = 'APPROVE' | 'REJECT';

/** An operator's decision on a deposit in COMPLIANCE_REVIEW. */
export type DepositInReview = {
  depositId: string; paymentId: string; businessId: string; depositCurrency: string; network: string; amount: string;
  fromAddress: string; txHash: string; riskScore: string; riskAssessment: Record<string, unknown>; receivedAt: Date;
};

/** Deposits waiting for an operator's compliance decision, oldest first: what `compliance:decide` takes. */
export async function depositsInReview(db: Queryable, filter: { businessId?: string; limit: number }): Promise<DepositInReview[]> {
  return db
    .select({
      depositId: deposits.id, paymentId: deposits.paymentId, businessId: deposits.businessId, depositCurrency: deposits.depositCurrency,
      network: deposits.network, amount: deposits.amount, fromAddress: deposits.fromAddress, txHash: deposits.txHash,
      riskScore: deposits.riskScore, riskAssessment: deposits.riskAssessment, receivedAt: deposits.receivedAt,
    })
    .from(deposits)
    .where(and(eq(deposits.status, 'COMPLIANCE_REVIEW'), filter.businessId ? eq(deposits.businessId, filter.businessId) : undefined))
    .orderBy(asc(deposits.receivedAt), asc(deposits.id))
    .limit(filter.limit);
}

export async function decideCompliance(
  deps: Deps,
  depositId: string,
  decision: ComplianceDecision,
  operator: { id: string; name: string },
): Promise<DepositStatus> {
  const [found] = await deps.database.db.select({ paymentId: deposits.paymentId }).from(deposits).where(eq(deposits.id, depositId));
  if (!found) throw notFound(`Deposit ${depositId} not found.`);
  return deps.database.db.transaction(async (tx) => {
    const at = deps.now();
    const p = await lockPayment(tx, found.paymentId);
    const [d] = await tx.select().from(deposits).where(eq(deposits.id, depositId)).for('update');
    if (d!.status !== 'COMPLIANCE_REVIEW') {
      throw new KassaError(409, 'NOT_IN_REVIEW', `Deposit ${depositId} is ${d!.status}, not in compliance review.`);
    }
    const by = `${decision === 'APPROVE' ? 'approved' : 'rejected'} by operator ${operator.name}`;
    if (decision === 'REJECT') {
      await transitionDeposit(tx, d!, 'BLOCKED', by, at, { operatorId: operator.id });
      await block(tx, d!, at);
    } else if (d!.chainStatus !== 'DROPPED' && (isRestricted(d!.depositCurrency) || !matchesPayment(p, d!.depositCurrency, d!.network))) {
      await transitionDeposit(tx, d!, 'UNPROCESSABLE', by, at, { operatorId: operator.id });
      await refundUnprocessable(tx, d!, at);
    } else {
      await followChain(tx, deps, p, d!, at, by);
    }
    await reevaluatePayment(tx, deps, p, at, `deposit ${depositId} ${by}`);
    return d!.status as DepositStatus;
  });
}

