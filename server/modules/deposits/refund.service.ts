/**
 * Refunds (spec §2.7, CONTRACT §5): created by the deposit rules, sent back
 * to the sending address through the chain adapter by the `broadcast_refund`
 * job. A refund that would not exceed the network fee is NON_REFUNDABLE, as
 * is one for an illicit deposit (the funds are frozen).
 */
import type { Queryable } from '../../../db/client.js';
import { deposits, refunds } from '../../../db/schema.js';
import { enqueue } from '../../../jobs/enqueue.js';
import { NETWORK_FEES, type CryptoCurrency, type Network } from '../money/index.js';
import { Dec } from '../money/index.js';
import { recordRefundCreated } from './deposit-transitions.js';

export type RefundReason = 'OVERPAYMENT' | 'CURRENCY_MISMATCH' | 'FOLLOW_UP_DEPOSIT' | 'RESTRICTED_CURRENCY' | 'ILLICIT_DEPOSIT';
type DepositRow = typeof deposits.$inferSelect;

/** A delisted ERC-20 token is sent back at the cost of a token transfer: 1 unit in the sandbox. */
const UNLISTED_TOKEN_FEE = '1';

export function networkFee(currency: string, network: string): Dec {
  return new Dec(NETWORK_FEES[currency as CryptoCurrency]?.[network as Network] ?? UNLISTED_TOKEN_FEE);
}

export async function createRefund(
  tx: Queryable,
  deposit: DepositRow,
  spec: { type: 'FULL' | 'PARTIAL'; reason: RefundReason; amount: Dec },
  at: Date,
): Promise<typeof refunds.$inferSelect> {
  const fee = networkFee(deposit.depositCurrency, deposit.network);
  const frozen = spec.reason === 'ILLICIT_DEPOSIT';
  const status = frozen || spec.amount.lte(fee) ? 'NON_REFUNDABLE' : 'PENDING';
  const rate = new Dec(deposit.rateDisplay);
  const [row] = await tx
    .insert(refunds)
    .values({
      depositId: deposit.id,
      type: spec.type,
      status,
      reason: spec.reason,
      depositCurrency: deposit.depositCurrency,
      network: deposit.network,
      toAddress: deposit.fromAddress,
      amount: spec.amount.toFixed(),
      fee: fee.toFixed(),
      displayCurrency: deposit.displayCurrency,
      displayAmount: spec.amount.mul(rate).toFixed(),
      displayFee: fee.mul(rate).toFixed(),
      createdAt: at,
    })
    .returning();
  await recordRefundCreated(tx, row!.id, status, frozen ? 'funds frozen: illicit deposit' : status === 'PENDING' ? spec.reason : 'amount does not exceed the network fee', at);
  if (status === 'PENDING') await enqueue(tx, 'broadcast_refund', { refundId: row!.id }, { jobKey: `broadcast_refund:${row!.id}` });
  return row!;
}
