/**
 * What the checkout widget shows, built by one pure function from the
 * payment record: never the paymentId, the business's id, settings or any
 * secret — only what the customer needs to pay, and the merchant's name
 * (the customer should see whom they pay).
 */
import { createHash } from 'node:crypto';
import type { Network } from '../money/index.js';
import { Dec, formatAnyAmount } from '../money/index.js';
import type { PaymentUriInput } from '../networks/index.js';
import { localeLanguage } from './create-payment.schema.js';
import type { PaymentRecord } from './payment-record.rules.js';

export type CheckoutOption = { currency: string; network: string; amount: string };

export type CheckoutDeposit = {
  id: string;
  status: string;
  currency: string;
  network: string;
  amount: string;
  transactionId: string;
  receivedAt: number;
  /** `sent`: what reaches the customer, the amount less the network fee (what a PENDING or CONFIRMED refund says). */
  refund?: { type: string; status: string; reason: string; amount: string; sent: string; transactionId?: string };
};

export type CheckoutView = {
  status: string;
  type: string;
  /** One of the 12 languages, from the payment's locale ('en' when unsupported). */
  language: string;
  expiresAt: number | null;
  displayCurrency: string | null;
  /** The price including the customer's fee share, in the display currency. */
  displayAmount: string | null;
  depositCurrency: string | null;
  network: string | null;
  depositAmount: string | null;
  walletAddress: string | null;
  destinationTag: string | null;
  /** The network's payment URI for the amount still due (the whole amount before any transfer). */
  paymentUri: string | null;
  /** Credited so far, in the deposit currency, and what is still due (null when not applicable). */
  paid: string;
  remaining: string | null;
  redirectUrl: string | null;
  redirectMode: string;
  options: CheckoutOption[];
  deposits: CheckoutDeposit[];
  /** The business's name. */
  merchantName: string;
  /** Sandbox: nothing is real money, the checkout says so plainly (CONTRACT §10); false in live mode. */
  testMode: boolean;
  /** The customer's share of the service fee, included in the amount due; null when they pay none. */
  customerFee: { amount: string; currency: string } | null;
  /**
   * What is still due once the transfers on their way (unconfirmed or in
   * review) count: the amount to show and ask for beside them. Equals
   * `remaining` when none is on its way; null when not applicable.
   */
  stillDue: string | null;
  /**
   * When the server built this view (UNIX seconds): the checkout counts down to `expiresAt` on the
   * server's clock, not the device's (a phone 40 minutes fast showed 00:00 on a payable payment).
   * Not part of the view's version: it changes every second, the content does not.
   */
  serverTime: number;
};

/** Deposit states whose amount is on its way: not credited yet, not refused. */
const IN_FLIGHT = new Set(['UNCONFIRMED', 'COMPLIANCE_REVIEW']);

/** What the checkout knows besides the payment record. */
export type CheckoutContext = {
  merchantName: string;
  testMode: boolean;
  /** The installation's payment URI of a network (live EVM: the node's chain id and contracts); null when not served. */
  paymentUri: (network: Network, p: PaymentUriInput) => string | null;
  /** Now, on the server's clock. */
  now: Date;
};

const positive = (amount: string | undefined): amount is string => amount !== undefined && new Dec(amount).gt(0);

export function toCheckoutView(p: PaymentRecord, options: CheckoutOption[], context: CheckoutContext): CheckoutView {
  const displayAmount =
    p.expectedDisplayAmount && p.displayCurrency
      ? formatAnyAmount(new Dec(p.expectedDisplayAmount).add(p.expectedDisplayDistributedUserServiceFee ?? 0), p.displayCurrency)
      : null;
  const currency = p.depositCurrency ?? null;
  const paid = currency ? p.actualDepositAmount : '0';
  const remaining =
    currency && p.expectedDepositAmount && p.type === 'ONE_TIME'
      ? formatAnyAmount(Dec.max(0, new Dec(p.expectedDepositAmount).sub(paid)), currency)
      : null;
  const onTheWay = p.deposits
    .filter((d) => IN_FLIGHT.has(String(d.status)) && d.depositCurrency === currency)
    .reduce((sum, d) => sum.add(String(d.depositAmount)), new Dec(0));
  const stillDue = remaining === null ? null : formatAnyAmount(Dec.max(0, new Dec(remaining).sub(onTheWay)), currency!);
  const customerFee = positive(p.expectedDisplayDistributedUserServiceFee) && p.displayCurrency
    ? { amount: p.expectedDisplayDistributedUserServiceFee, currency: p.displayCurrency }
    : positive(p.expectedDepositDistributedUserServiceFee) && currency
      ? { amount: p.expectedDepositDistributedUserServiceFee, currency }
      : null;
  return {
    status: p.status,
    type: p.type,
    language: localeLanguage(p.locale) ?? 'en',
    expiresAt: p.type === 'ONE_TIME' ? p.paymentInitiatedAt + p.expirationMinutes * 60 : null,
    displayCurrency: p.displayCurrency ?? null,
    displayAmount,
    depositCurrency: currency,
    network: p.expectedNetwork ?? null,
    depositAmount: p.expectedDepositAmount ?? null,
    walletAddress: p.walletAddress ?? null,
    destinationTag: p.destinationTag ?? null,
    // For what is still due: after a partial payment, a wallet scanning the QR code is asked for the rest, not the whole.
    paymentUri:
      p.walletAddress && currency && p.expectedNetwork && p.expectedDepositAmount
        ? context.paymentUri(p.expectedNetwork as Network, {
            currency,
            address: p.walletAddress,
            amount: stillDue !== null && new Dec(stillDue).gt(0) ? stillDue : p.expectedDepositAmount,
            tag: p.destinationTag,
          })
        : null,
    paid,
    remaining,
    redirectUrl: p.redirectUrl ?? null,
    redirectMode: p.redirectMode,
    options: p.status === 'NEW' ? options : [],
    deposits: p.deposits.map((d) => {
      const refund = d.refund as Record<string, string> | undefined;
      return {
        id: String(d.id),
        status: String(d.status),
        currency: String(d.depositCurrency),
        network: String(d.network),
        amount: String(d.depositAmount),
        transactionId: String(d.transactionId),
        receivedAt: Number(d.depositReceivedAt),
        ...(refund
          ? {
              refund: {
                type: refund.type!,
                status: refund.status!,
                reason: refund.reason!,
                amount: refund.amount!,
                sent: formatAnyAmount(Dec.max(0, new Dec(refund.amount!).sub(refund.fee ?? '0')), String(d.depositCurrency)),
                ...(refund.transactionId ? { transactionId: refund.transactionId } : {}),
              },
            }
          : {}),
      };
    }),
    merchantName: context.merchantName,
    testMode: context.testMode,
    customerFee,
    stillDue,
    serverTime: Math.floor(context.now.getTime() / 1000),
  };
}

/** A stable id of a view's content: the subscription's event id, so a reconnecting client skips what it has. */
export function viewVersion(view: CheckoutView): string {
  const { serverTime: _now, ...content } = view;
  return createHash('sha256').update(JSON.stringify(content)).digest('base64url').slice(0, 16);
}
