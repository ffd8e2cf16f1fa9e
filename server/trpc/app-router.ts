/**
 * The composed internal router at /trpc. Internal tools import
 * `type AppRouter` and get end-to-end types with @trpc/client.
 */
import { apiKeyRouter } from '../businesses/api-key-router.js';
import { businessRouter } from '../businesses/business-router.js';
import { balanceRouter, depositRouter } from '../payments/deposit-router.js';
import { paymentRouter } from '../payments/payment-router.js';
import { callbackRouter, withdrawalRouter } from '../withdrawals/withdrawal-router.js';
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
