/**
 * What the checkout shows for a payment, decided by small pure functions
 * of the server's `CheckoutView` (and the clock), so each decision is unit
 * tested without a browser: the phase, the progress steps, the headline,
 * whether the payment is complete, and where and how to redirect.
 */
import type { CheckoutDeposit, CheckoutOption, CheckoutView } from '../server/modules/payments/checkout-view.rules.js';
import { sumDecimals } from './format.js';
import type { MessageKey } from './localize.js';

export type { CheckoutDeposit, CheckoutOption, CheckoutView };

/**
 * choose: NEW, pick a currency · pay: waiting for a transfer · confirming: a
 * transfer is seen, not final · underpaid: confirmed transfers fall short ·
 * received: complete · expired / blocked / unprocessable / failed: see CONTRACT §5.
 */
export type Phase = 'choose' | 'pay' | 'confirming' | 'underpaid' | 'received' | 'expired' | 'blocked' | 'unprocessable' | 'failed';

const inFlight = (d: CheckoutDeposit) => d.status === 'UNCONFIRMED' || d.status === 'COMPLIANCE_REVIEW';

/**
 * A REUSABLE payment takes transfers for ever, from many customers: this page's customer is shown what
 * happened since it opened. The transfers already in when it opened (`baseline`: their ids) are left
 * out, with what they paid, so a link paid before shows how to pay again, not "received" (nor sends
 * the customer back to the shop), and completes on a new transfer only. A ONE_TIME view is unchanged.
 */
export function sinceOpened(view: CheckoutView, baseline: ReadonlySet<string>): CheckoutView {
  if (view.type !== 'REUSABLE' || baseline.size === 0) return view;
  const deposits = view.deposits.filter((d) => !baseline.has(d.id));
  const credited = deposits.filter((d) => d.status === 'CONFIRMED' && d.currency === view.depositCurrency && !d.refund);
  const status = deposits.some((d) => d.status === 'CONFIRMED') ? view.status : deposits.some(inFlight) ? 'AWAITING' : 'PENDING';
  return { ...view, status, deposits, paid: sumDecimals(credited.map((d) => d.amount)) };
}

/**
 * The baseline `sinceOpened` takes, from the first view a page shows: the transfers already settled
 * (confirmed, refused, failed). One still on its way stays in sight: it may be this customer's own,
 * sent before a reload, and showing the address again would invite paying twice.
 */
export const settledIds = (view: CheckoutView): Set<string> =>
  new Set(view.type === 'REUSABLE' ? view.deposits.filter((d) => !inFlight(d)).map((d) => d.id) : []);

/** Complete once a deposit has been received: DEPOSITED, OVERPAID, or any confirmed deposit on a REUSABLE payment. */
export function isComplete(view: CheckoutView): boolean {
  return (
    view.status === 'DEPOSITED' ||
    view.status === 'OVERPAID' ||
    (view.type === 'REUSABLE' && view.deposits.some((d) => d.status === 'CONFIRMED'))
  );
}

export function phaseOf(view: CheckoutView): Phase {
  if (isComplete(view)) return 'received';
  switch (view.status) {
    case 'NEW':
      return 'choose';
    case 'AWAITING':
      return view.deposits.some(inFlight) ? 'confirming' : 'underpaid';
    case 'EXPIRED':
      return 'expired';
    case 'BLOCKED':
      return 'blocked';
    case 'UNPROCESSABLE':
      return 'unprocessable';
    case 'FAILED':
      return 'failed';
    default:
      // PENDING, and any status this widget does not know yet: show how to pay.
      return 'pay';
  }
}

/** Whether the customer should still be shown where to send money (see also `owesMore`). */
export const showsAddress = (phase: Phase): boolean =>
  phase === 'pay' || phase === 'underpaid' || phase === 'unprocessable' || phase === 'failed';

/** A decimal string above zero (the server's amounts are plain decimals: no float needed). */
const isPositive = (amount: string | null | undefined): boolean => !!amount && /[1-9]/.test(amount);

/**
 * A transfer is on its way (confirming or in review) but falls short: the
 * rest is still due, and the customer is shown it and where to send it.
 */
export const owesMore = (view: CheckoutView, phase: Phase): boolean => phase === 'confirming' && isPositive(view.stillDue);

/** Whether to show the amount, the address and how to pay. */
export const showsPay = (view: CheckoutView, phase: Phase): boolean => showsAddress(phase) || owesMore(view, phase);

/**
 * The amount to ask for: what is still due once the customer has paid part
 * (confirmed, or on its way), else the whole amount.
 */
export function dueAmount(view: CheckoutView, phase: Phase): string | null {
  if (owesMore(view, phase)) return view.stillDue;
  return showsAddress(phase) && phase !== 'pay' && view.remaining ? view.remaining : view.depositAmount;
}

/**
 * The label over the amount: "Still due" after part of it, "Amount" while a transfer that covers it
 * confirms (nothing is due any more, but the amount stays in sight), else "Amount due".
 */
export const amountLabel = (view: CheckoutView, phase: Phase): MessageKey =>
  owesMore(view, phase) ? 'stillDue' : phase === 'confirming' ? 'amount' : 'amountDue';

/** What the per-payment tag is called: Stellar's is a memo (a memo id), XRP's a destination tag. */
export const tagKeys = (network: string | null | undefined): { label: MessageKey; copy: MessageKey; note: MessageKey } =>
  network === 'XLM' ? { label: 'memo', copy: 'copyMemo', note: 'memoNote' } : { label: 'tag', copy: 'copyTag', note: 'tagNote' };

/** The one-line status the live region announces. */
export function headlineKey(view: CheckoutView, phase: Phase): MessageKey {
  switch (phase) {
    case 'choose':
      return 'choose';
    case 'pay':
      return 'waiting';
    case 'confirming':
      return view.deposits.some((d) => d.status === 'COMPLIANCE_REVIEW') ? 'review' : 'confirming';
    default:
      return phase;
  }
}

export type Tone = 'info' | 'progress' | 'success' | 'warning' | 'danger';

export function toneOf(phase: Phase): Tone {
  switch (phase) {
    case 'received':
      return 'success';
    case 'confirming':
      return 'progress';
    case 'underpaid':
    case 'expired':
    case 'unprocessable':
      return 'warning';
    case 'blocked':
    case 'failed':
      return 'danger';
    default:
      return 'info';
  }
}

export type StepState = 'done' | 'current' | 'todo';

/** Seen → confirming → received, for the phases where a transfer is on its way or in. */
export function stepsOf(phase: Phase): [StepState, StepState, StepState] | null {
  if (phase === 'confirming') return ['done', 'current', 'todo'];
  if (phase === 'received') return ['done', 'done', 'done'];
  return null;
}

export type DepositTone = 'success' | 'progress' | 'danger' | 'warning';

export function depositTone(status: string): DepositTone {
  if (status === 'CONFIRMED') return 'success';
  if (status === 'UNCONFIRMED' || status === 'COMPLIANCE_REVIEW') return 'progress';
  return status === 'UNPROCESSABLE' ? 'warning' : 'danger';
}

/** Seconds until expiry (never negative), or null for payments that do not expire. */
export function secondsLeft(expiresAt: number | null, nowMs: number): number | null {
  return expiresAt === null ? null : Math.max(0, expiresAt - Math.floor(nowMs / 1000));
}

/** Whether the countdown is still meaningful: only while the customer may still pay. */
export const showsCountdown = (view: CheckoutView, phase: Phase): boolean =>
  view.expiresAt !== null && (phase === 'choose' || phase === 'pay' || phase === 'underpaid' || phase === 'unprocessable' || phase === 'failed');

export type RedirectPlan = { url: string; target: '_top' | '_self' };

/**
 * Where to send the customer once the payment is complete: the merchant's
 * `redirectUrl` (http or https only) in the top window (PARENT, the
 * default) or in the checkout's own browsing context (SELF).
 */
export function redirectPlan(view: CheckoutView): RedirectPlan | null {
  const url = backUrl(view);
  return url && isComplete(view) ? { url, target: targetOf(view) } : null;
}

/** The "back to the shop" address, whatever the phase; null without a usable `redirectUrl`. */
export function backUrl(view: CheckoutView): string | null {
  if (!view.redirectUrl) return null;
  try {
    const url = new URL(view.redirectUrl);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

export const targetOf = (view: CheckoutView): '_top' | '_self' => (view.redirectMode === 'SELF' ? '_self' : '_top');

/** The currencies offered for a NEW payment, in the server's order, each with its network options. */
export function groupOptions(options: CheckoutOption[]): { currency: string; options: CheckoutOption[] }[] {
  const groups = new Map<string, CheckoutOption[]>();
  for (const option of options) groups.set(option.currency, [...(groups.get(option.currency) ?? []), option]);
  return [...groups].map(([currency, list]) => ({ currency, options: list }));
}

export const CURRENCY_NAMES: Record<string, string> = {
  BCH: 'Bitcoin Cash', BNB: 'BNB', BTC: 'Bitcoin', ETH: 'Ethereum', LINK: 'Chainlink', LTC: 'Litecoin',
  SOL: 'Solana', TRX: 'TRON', USDC: 'USD Coin', USDT: 'Tether', XLM: 'Stellar', XRP: 'XRP',
};

const NETWORK_NAMES: Record<string, string> = {
  BTC: 'Bitcoin', BCH: 'Bitcoin Cash', LTC: 'Litecoin', XLM: 'Stellar', XRP: 'XRP Ledger',
  ETH: 'Ethereum', BSC: 'BNB Smart Chain', SOL: 'Solana', TRX: 'TRON',
};
const TOKEN_STANDARDS: Record<string, string> = { ETH: 'ERC-20', BSC: 'BEP-20', TRX: 'TRC-20', SOL: 'SPL' };
const NATIVE: Record<string, string> = { ETH: 'ETH', BSC: 'BNB', TRX: 'TRX', SOL: 'SOL' };

/** A network in a few letters for a 320 px phone: the token standard for a token (`TRC-20`), else the network's code. */
export function networkShort(network: string, currency: string | null): string {
  const standard = TOKEN_STANDARDS[network];
  return standard && currency && NATIVE[network] !== currency ? standard : network;
}

/** A network as people know it, with the token standard when the currency is a token on it: `Ethereum (ERC-20)`. */
export function networkLabel(network: string, currency: string | null): string {
  const name = NETWORK_NAMES[network] ?? network;
  const standard = TOKEN_STANDARDS[network];
  return standard && currency && NATIVE[network] !== currency ? `${name} (${standard})` : name;
}
