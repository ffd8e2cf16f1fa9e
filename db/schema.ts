/**
 * The database schema. drizzle-kit generates the SQL migrations in
 * db/migrations/ from this file (`npm run db:generate`); they are committed
 * and applied at start.
 *
 * Amounts are `numeric` (exact decimals, read back as strings); times are
 * `timestamptz` and become UNIX seconds only in the API views.
 */
import { sql } from 'drizzle-orm';
import {
  bigserial, boolean, index, integer, jsonb, numeric, pgSequence, pgTable, text, timestamp, uniqueIndex, uuid,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const businesses = pgTable('businesses', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  settlementCurrency: text('settlement_currency').notNull().default('EUR'),
  /** F of CONTRACT §5: the service fee, percent of the payment. */
  serviceFeePercent: numeric('service_fee_percent').notNull().default('1'),
  /** U of CONTRACT §5: the share of that fee the end user pays on top, percent. */
  userFeeSharePercent: numeric('user_fee_share_percent').notNull().default('0'),
  overpaymentPolicy: text('overpayment_policy').notNull().default('PROCESS'),
  refundFollowUpDeposits: boolean('refund_follow_up_deposits').notNull().default(false),
  /** Per deposit currency, the networks this business accepts (2024-08-06); absent = all. */
  allowedNetworks: jsonb('allowed_networks').$type<Record<string, string[]>>().notNull().default({}),
  withdrawalCallbackUrl: text('withdrawal_callback_url'),
  paymentCallbackUrl: text('payment_callback_url'),
  /** `whsec_…` Standard Webhooks secret, encrypted with KASSA_MASTER_KEY. */
  callbackSecretEnc: text('callback_secret_enc').notNull(),
  riskReviewThreshold: numeric('risk_review_threshold').notNull().default('5'),
  riskBlockThreshold: numeric('risk_block_threshold').notNull().default('8'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const apiKeys = pgTable('api_keys', {
  id: uuid('id').primaryKey().defaultRandom(),
  businessId: uuid('business_id').notNull().references(() => businesses.id),
  /** The public key id sent in the Authorization header. */
  key: text('key').notNull().unique(),
  /** The HMAC secret, encrypted with KASSA_MASTER_KEY (needed in clear to verify signatures). */
  secretEnc: text('secret_enc').notNull(),
  scopes: text('scopes').array().notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  createdAt: createdAt(),
});

export const operators = pgTable('operators', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  role: text('role').notNull(),
  /** SHA-256 of the bearer token: the token itself is shown once and never stored. */
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: createdAt(),
});

export const payments = pgTable(
  'payments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: uuid('business_id').notNull().references(() => businesses.id),
    clientPaymentId: text('client_payment_id').notNull(),
    /** SHA-256 of the canonical request, to tell a replay from a conflicting reuse. */
    requestHash: text('request_hash').notNull(),
    checkoutToken: text('checkout_token').notNull().unique(),
    status: text('status').notNull(),
    type: text('type').notNull(),
    rateType: text('rate_type').notNull(),
    locale: text('locale').notNull(),
    displayCurrency: text('display_currency'),
    expectedDisplayAmount: numeric('expected_display_amount'),
    expectedDisplayFee: numeric('expected_display_fee'),
    depositCurrency: text('deposit_currency'),
    network: text('network'),
    expectedDepositAmount: numeric('expected_deposit_amount'),
    expectedDepositFee: numeric('expected_deposit_fee'),
    expectedUniformAmount: numeric('expected_uniform_amount'),
    /** Rate of one unit of deposit currency in display currency, locked for FIXED payments. */
    lockedRate: numeric('locked_rate'),
    serviceFeePercent: numeric('service_fee_percent').notNull(),
    userFeeSharePercent: numeric('user_fee_share_percent').notNull(),
    overpaymentPolicy: text('overpayment_policy').notNull(),
    refundFollowUpDeposits: boolean('refund_follow_up_deposits').notNull(),
    walletAddress: text('wallet_address'),
    destinationTag: text('destination_tag'),
    redirectUrl: text('redirect_url'),
    redirectMode: text('redirect_mode').notNull(),
    expirationMinutes: integer('expiration_minutes').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    initiatedBy: text('initiated_by').notNull(),
    initiatedAt: timestamp('initiated_at', { withTimezone: true }).notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('payments_business_client_id').on(t.businessId, t.clientPaymentId),
    index('payments_business_created').on(t.businessId, t.createdAt.desc(), t.id.desc()),
    uniqueIndex('payments_address_tag').on(t.network, t.walletAddress, t.destinationTag),
  ],
);

/** Append-only: one row per payment status transition (creation included). */
export const paymentEvents = pgTable(
  'payment_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    paymentId: uuid('payment_id').notNull().references(() => payments.id),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    reason: text('reason').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    at: timestamp('at', { withTimezone: true }).notNull(),
  },
  (t) => [index('payment_events_payment').on(t.paymentId, t.id)],
);

/** Derivation index of deposit addresses: one fresh address (or tag) per payment. */
export const depositAddressIndex = pgSequence('deposit_address_index', { startWith: 1, minValue: 1 });
