/**
 * The DOM events `<crypto-checkout>` dispatches. Both bubble and are
 * composed (they cross shadow roots), and carry a typed `detail`.
 */
import type { CheckoutView } from '../server/modules/payments/checkout-view.rules.js';

/** Detail of `checkout-status`: the payment's status changed (also fired for the first status seen). */
export type CheckoutStatusDetail = {
  status: string;
  /** The status before, or null for the first one. */
  previousStatus: string | null;
  /** Credited so far, in `currency`. */
  paid: string;
  /** Still due in `currency`; null when not applicable (NEW, REUSABLE). */
  remaining: string | null;
  currency: string | null;
};

/** Detail of `checkout-complete`: a deposit has been received (fired once per element). */
export type CheckoutCompleteDetail = {
  status: string;
  paid: string;
  currency: string | null;
  /** Where the checkout is about to send the customer, if anywhere. */
  redirectUrl: string | null;
};

export type CheckoutStatusEvent = CustomEvent<CheckoutStatusDetail>;
export type CheckoutCompleteEvent = CustomEvent<CheckoutCompleteDetail>;

declare global {
  interface GlobalEventHandlersEventMap {
    'checkout-status': CheckoutStatusEvent;
    'checkout-complete': CheckoutCompleteEvent;
  }
}

export const statusDetail = (view: CheckoutView, previousStatus: string | null): CheckoutStatusDetail => ({
  status: view.status,
  previousStatus,
  paid: view.paid,
  remaining: view.remaining,
  currency: view.depositCurrency,
});

export const completeDetail = (view: CheckoutView, redirectUrl: string | null): CheckoutCompleteDetail => ({
  status: view.status,
  paid: view.paid,
  currency: view.depositCurrency,
  redirectUrl,
});

/**
 * Dispatch a bubbling, composed event from `target`; `checkout-complete` is
 * cancelable (cancelling it keeps the customer on the page). False when cancelled.
 */
export function emit<K extends 'checkout-status' | 'checkout-complete'>(
  target: EventTarget,
  name: K,
  detail: GlobalEventHandlersEventMap[K]['detail'],
): boolean {
  return target.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true, cancelable: name === 'checkout-complete', detail }));
}
