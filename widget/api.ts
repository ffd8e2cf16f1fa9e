/**
 * The widget's tRPC client of the public checkout router: `get` and
 * `choose` over `httpLink` (two calls: batching would cost 0.5 KB for nothing), `updates` over `httpSubscriptionLink`
 * (server-sent events; the browser's EventSource reconnects and resumes from
 * the last event id). Only the router's type is imported from the server.
 */
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import type { CheckoutRouter } from '../server/edges/checkout/checkout-router.js';

export type CheckoutTarget = { apiUrl: string; token: string };

/**
 * The API base and token of a `paymentUrl` (`…/checkout/<token>`): the API
 * is `…/checkout/api` on the same origin and path prefix. Relative URLs
 * resolve against `base`. Null for anything else.
 */
export function parsePaymentUrl(paymentUrl: string, base?: string): CheckoutTarget | null {
  let url: URL;
  try {
    url = new URL(paymentUrl, base);
  } catch {
    return null;
  }
  const match = /^(.*)\/checkout\/([\w-]+)\/?$/.exec(url.pathname);
  if (!match || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null;
  return { apiUrl: `${url.origin}${match[1]}/checkout/api`, token: match[2]! };
}

export function createCheckoutClient(apiUrl: string) {
  return createTRPCClient<CheckoutRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: apiUrl }),
        false: httpLink({ url: apiUrl }),
      }),
    ],
  });
}

export type CheckoutClient = ReturnType<typeof createCheckoutClient>;

/** NOT_FOUND from the server: the token is unknown, retrying will not help. */
export function isNotFound(error: unknown): boolean {
  return (error as { data?: { code?: string } } | null)?.data?.code === 'NOT_FOUND';
}
