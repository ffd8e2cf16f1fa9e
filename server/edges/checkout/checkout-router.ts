/**
 * The public checkout router, keyed by the checkout token (never the
 * paymentId, never a merchant secret): get the view, choose a currency, and
 * subscribe to every change over server-sent events. Exported as
 * `type CheckoutRouter` for the widget's @trpc/client.
 */
import { tracked } from '@trpc/server';
import { z } from 'zod';
import { checkoutProcedure, router } from '../trpc/init.js';
import { checkoutView, chooseByToken, paymentByToken } from '../../modules/payments/index.js';
import { viewVersion } from '../../modules/payments/index.js';

export const checkoutRouter = router({
  get: checkoutProcedure().query(async ({ ctx, input }) => checkoutView(ctx.deps, await paymentByToken(ctx.deps, input.token))),

  choose: checkoutProcedure({ depositCurrency: z.string().max(10), network: z.string().max(10) }).mutation(({ ctx, input }) =>
    chooseByToken(ctx.deps, input.token, input),
  ),

  /**
   * The current view at once, then again after every change. Event ids are
   * content versions: a client reconnecting with `lastEventId` gets the view
   * only if it changed meanwhile.
   */
  updates: checkoutProcedure({ lastEventId: z.string().max(64).nullish() }).subscription(async function* ({ ctx, input, signal }) {
    const row = await paymentByToken(ctx.deps, input.token);
    // A held slot per open stream (at most a few per payment and per address), given back when it ends.
    const release = ctx.limits?.holdStream(input.token, ctx.ip ?? 'unknown');
    let wake: (() => void) | null = null;
    let dirty = true;
    const unsubscribe = ctx.live?.subscribe(row.id, () => {
      dirty = true;
      wake?.();
    });
    // A client that drops the stream before its first view is written may never resume this generator,
    // so its `finally` would not run: the slot and the subscription are given back on the abort itself
    // (both are idempotent, and `finally` still runs them for a stream that ends otherwise).
    const onAbort = () => {
      release?.();
      unsubscribe?.();
      wake?.();
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    try {
      let last = input.lastEventId ?? null;
      while (!signal?.aborted) {
        if (dirty) {
          dirty = false;
          const view = await checkoutView(ctx.deps, await paymentByToken(ctx.deps, input.token));
          const version = viewVersion(view);
          if (version !== last) {
            last = version;
            yield tracked(version, view);
          }
        }
        if (!dirty) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      release?.();
      unsubscribe?.();
      signal?.removeEventListener('abort', onAbort);
    }
  }),
});

export type CheckoutRouter = typeof checkoutRouter;
