/** Internal tRPC procedures for businesses (CONTRACT §8). */
import { z } from 'zod';
import { adminProcedure, operatorProcedure, router } from './init.js';
import {
  CRYPTO_CURRENCIES, DEPOSIT_NETWORKS, NETWORKS, OVERPAYMENT_POLICIES, SETTLEMENT_CURRENCIES,
} from '../../modules/money/index.js';
import { createBusiness, getBusiness, updateBusiness, type Business } from '../../modules/businesses/index.js';
import { unixTimes } from '../unix-times.rules.js';
import { plainText } from '../../platform/validate.js';

// "100.5" is not 100 with a fraction: above the whole maximum only zeros may follow the point.
const percent = z.string().regex(/^(?:100(?:\.0{1,4})?|[0-9]{1,2}(?:\.[0-9]{1,4})?)$/, 'a percentage from 0 to 100 as a decimal string');
const riskScore = z.string().regex(/^(?:10(?:\.0{1,2})?|[0-9](?:\.[0-9]{1,2})?)$/, 'a risk score from 0 to 10 as a decimal string');
const callbackUrl = z.url({ protocol: /^https?$/ }).max(2048).nullable();
/** A business's name, over tRPC and on the command line. */
export const BusinessNameSchema = plainText(200).min(1);

export const UpdateBusinessSchema = z
  .strictObject({
    businessId: z.guid(),
    name: BusinessNameSchema.optional(),
    settlementCurrency: z.enum(SETTLEMENT_CURRENCIES).optional(),
    serviceFeePercent: percent.optional(),
    userFeeSharePercent: percent.optional(),
    overpaymentPolicy: z.enum(OVERPAYMENT_POLICIES).optional(),
    refundFollowUpDeposits: z.boolean().optional(),
    allowedNetworks: z.partialRecord(z.enum(CRYPTO_CURRENCIES), z.array(z.enum(NETWORKS))).optional(),
    withdrawalCallbackUrl: callbackUrl.optional(),
    paymentCallbackUrl: callbackUrl.optional(),
    riskReviewThreshold: riskScore.optional(),
    riskBlockThreshold: riskScore.optional(),
    approvalPolicy: z.enum(['NONE', 'ONE', 'TWO']).optional(),
    requireWhitelist: z.boolean().optional(),
    defaultFeePayer: z.enum(['BUSINESS', 'RECIPIENT']).optional(),
  })
  .superRefine((v, ctx) => {
    for (const [currency, networks] of Object.entries(v.allowedNetworks ?? {})) {
      const valid = DEPOSIT_NETWORKS[currency as keyof typeof DEPOSIT_NETWORKS];
      for (const n of networks ?? []) {
        if (!valid.includes(n)) ctx.addIssue({ code: 'custom', path: ['allowedNetworks', currency], message: `${currency} is not deposited on ${n}` });
      }
    }
  });

/** What operators see of a business: everything but the encrypted secret. */
export function businessView(b: Business) {
  const { callbackSecretEnc: _secret, ...rest } = b;
  return unixTimes(rest);
}

export const businessRouter = router({
  /** A new business with its callback secret and an API key holding every scope: the secrets are shown once, here. */
  create: adminProcedure
    .input(z.strictObject({ name: BusinessNameSchema, withdrawalCallbackUrl: callbackUrl.optional(), paymentCallbackUrl: callbackUrl.optional() }))
    .mutation(async ({ ctx, input }) => {
      const created = await createBusiness(ctx.deps.database.db, ctx.deps.masterKey, {
        name: input.name,
        withdrawalCallbackUrl: input.withdrawalCallbackUrl ?? undefined,
        paymentCallbackUrl: input.paymentCallbackUrl ?? undefined,
      });
      return { business: businessView(created.business), apiKey: created.apiKey, apiSecret: created.apiSecret, callbackSecret: created.callbackSecret };
    }),
  get: operatorProcedure.input(z.strictObject({ businessId: z.guid() })).query(async ({ ctx, input }) =>
    businessView(await getBusiness(ctx.deps.database.db, input.businessId)),
  ),
  update: adminProcedure.input(UpdateBusinessSchema).mutation(async ({ ctx, input }) => {
    const { businessId, allowedNetworks, ...settings } = input;
    const row = await updateBusiness(ctx.deps.database.db, businessId, {
      ...settings,
      ...(allowedNetworks ? { allowedNetworks: allowedNetworks as Record<string, string[]> } : {}),
    });
    return businessView(row);
  }),
});
