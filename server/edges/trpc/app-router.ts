/**
 * The composed internal router at /trpc. Internal tools import
 * `type AppRouter` and get end-to-end types with @trpc/client.
 */
import { apiKeyRouter } from './api-key-router.js';
import { businessRouter } from './business-router.js';
import { balanceRouter, depositRouter } from './deposit-router.js';
import { paymentRouter } from './payment-router.js';
import { callbackRouter, withdrawalRouter } from './withdrawal-router.js';
import { router } from './init.js';

export const appRouter = router({
  businesses: businessRouter,
  apiKeys: apiKeyRouter,
  payments: paymentRouter,
  deposits: depositRouter,
  balances: balanceRouter,
  withdrawals: withdrawalRouter,
  callbacks: callbackRouter,
});

export type AppRouter = typeof appRouter;
