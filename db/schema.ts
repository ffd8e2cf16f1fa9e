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
  bigint, bigserial, boolean, check, index, integer, jsonb, numeric, pgSequence, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid,
} from 'drizzle-orm/pg-core';

/** Every time is a `timestamptz`. */
const instant = (name: string) => timestamp(name, { withTimezone: true });
const createdAt = () => instant('created_at').notNull().defaultNow();

/**
 * Column groups that several tables hold with the same meaning, written once. A group is spread
 * into a table's columns; the SQL is the same as the columns written out (drizzle-kit generates
 * no change from this file's helpers).
 */
const columns = {
  /** A row of a business: its own random id and its business. */
  ofBusiness: () => ({
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: uuid('business_id').notNull().references(() => businesses.id),
  }),
  /** The sender's output on a chain: one per (network, transaction, output). */
  chainOutput: () => ({
    network: text('network').notNull(),
    txHash: text('tx_hash').notNull(),
    outputIndex: integer('output_index').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    destinationTag: text('destination_tag'),
  }),
  /** The screening of a counterparty's address (compliance/RiskAssessment). */
  risk: () => ({
    riskScore: numeric('risk_score').notNull(),
    riskAssessment: jsonb('risk_assessment').$type<Record<string, unknown>>().notNull(),
  }),
  /** The currencies a money movement is shown and settled in, and its rates into them. */
  valuation: () => ({
    displayCurrency: text('display_currency').notNull(),
    settlementCurrency: text('settlement_currency').notNull(),
    rateDisplay: numeric('rate_display').notNull(),
    rateSettlement: numeric('rate_settlement').notNull(),
  }),
};

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
  /** Withdrawal approvals needed before broadcast: NONE, ONE or TWO (2024-04-01, 2024-05-29). */
  approvalPolicy: text('approval_policy').notNull().default('NONE'),
  /** Withdrawals only to whitelisted addresses (2023-02-09). */
  requireWhitelist: boolean('require_whitelist').notNull().default(false),
  /** Who pays the network fee of a withdrawal unless the request says (2024-07-04): BUSINESS or RECIPIENT. */
  defaultFeePayer: text('default_fee_payer').notNull().default('BUSINESS'),
  createdAt: createdAt(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

/**
 * The callback secret a rotation replaced, still signing beside the new one
 * until `expires_at` (Standard Webhooks allows several space-separated
 * signatures), so a receiver can switch secrets without losing a callback.
 * Its own table, so that no view of a business row can carry it by accident.
 */
export const previousCallbackSecrets = pgTable('previous_callback_secrets', {
  businessId: uuid('business_id').primaryKey().references(() => businesses.id),
  /** `whsec_…`, encrypted with KASSA_MASTER_KEY. */
  secretEnc: text('secret_enc').notNull(),
  expiresAt: instant('expires_at').notNull(),
});

export const apiKeys = pgTable('api_keys', {
  ...columns.ofBusiness(),
  /** The public key id sent in the Authorization header. */
  key: text('key').notNull().unique(),
  /** The HMAC secret, encrypted with KASSA_MASTER_KEY (needed in clear to verify signatures). */
  secretEnc: text('secret_enc').notNull(),
  scopes: text('scopes').array().notNull(),
  revokedAt: instant('revoked_at'),
  createdAt: createdAt(),
});

export const operators = pgTable('operators', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  role: text('role').notNull(),
  /** SHA-256 of the bearer token: the token itself is shown once and never stored. */
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: createdAt(),
  /** Set by operator:revoke: the token is refused from its next request on; the row stays for the approvals it signed. */
  revokedAt: instant('revoked_at'),
});

export const payments = pgTable(
  'payments',
  {
    ...columns.ofBusiness(),
    clientPaymentId: text('client_payment_id').notNull(),
    /** SHA-256 of the canonical request, to tell a replay from a conflicting reuse. */
    requestHash: text('request_hash').notNull(),
    checkoutToken: text('checkout_token').notNull().unique(),
    status: text('status').notNull(),
    type: text('type').notNull(),
    rateType: text('rate_type').notNull(),
    locale: text('locale').notNull(),
    /** FIAT (displayAmount given; NEW until a currency is chosen) or CRYPTO (depositAmount given). */
    pricedIn: text('priced_in').notNull(),
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
    /** Locked rates of the deposit currency in settlement currency and in EUR (FIXED). */
    lockedRateSettlement: numeric('locked_rate_settlement'),
    lockedRateUniform: numeric('locked_rate_uniform'),
    /** The rate that priced the payment and what it stands on (live: the agreeing market sources). */
    pricingRate: jsonb('pricing_rate').$type<{ from: string; to: string; rate: string; sources: string[]; at: string }>(),
    settlementCurrency: text('settlement_currency').notNull(),
    riskReviewThreshold: numeric('risk_review_threshold').notNull(),
    riskBlockThreshold: numeric('risk_block_threshold').notNull(),
    serviceFeePercent: numeric('service_fee_percent').notNull(),
    userFeeSharePercent: numeric('user_fee_share_percent').notNull(),
    overpaymentPolicy: text('overpayment_policy').notNull(),
    refundFollowUpDeposits: boolean('refund_follow_up_deposits').notNull(),
    walletAddress: text('wallet_address'),
    destinationTag: text('destination_tag'),
    /** The derivation index behind walletAddress (`<xpub>/0/<index>` live): what a sweep signs with. */
    addressIndex: bigint('address_index', { mode: 'number' }),
    redirectUrl: text('redirect_url'),
    redirectMode: text('redirect_mode').notNull(),
    expirationMinutes: integer('expiration_minutes').notNull(),
    expiresAt: instant('expires_at'),
    initiatedBy: text('initiated_by').notNull(),
    initiatedAt: instant('initiated_at').notNull(),
    requestedAt: instant('requested_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('payments_business_client_id').on(t.businessId, t.clientPaymentId),
    index('payments_business_created').on(t.businessId, t.createdAt.desc(), t.id.desc()),
    // Also the deposit matcher's lookup (network, address, tag): no second index on the address alone.
    uniqueIndex('payments_address_tag').on(t.network, t.walletAddress, t.destinationTag),
    // The expiry sweep's scan (payments/expiry.ts): only payments that can still expire.
    index('payments_expirable').on(t.expiresAt).where(sql`type = 'ONE_TIME' and status in ('NEW', 'PENDING', 'AWAITING', 'UNPROCESSABLE', 'FAILED')`),
  ],
);

/** The entities whose status moves through a state machine (platform/state-machine.ts). */
export const EVENT_ENTITY_TYPES = ['payment', 'deposit', 'refund', 'withdrawal'] as const;
export type EventEntityType = (typeof EVENT_ENTITY_TYPES)[number];

/**
 * Append-only: one row per status transition (creation included) of any
 * entity, written by the one `transition()` through each entity's store.
 * `entity_id` names a row of the table `entity_type` says; it has no foreign
 * key (one column cannot reference four tables), but the row is written in
 * the transaction that inserts or moves that entity. `at` is the clock's
 * time of the change (the sandbox clock in tests), not the insert time.
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    entityType: text('entity_type').$type<EventEntityType>().notNull(),
    entityId: uuid('entity_id').notNull(),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    reason: text('reason').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    at: instant('at').notNull(),
  },
  (t) => [
    index('events_entity').on(t.entityType, t.entityId, t.id),
    check('events_entity_type', sql`${t.entityType} in (${sql.raw(EVENT_ENTITY_TYPES.map((e) => `'${e}'`).join(', '))})`),
  ],
);

/** Derivation index of deposit addresses: one fresh address (or tag) per payment. */
export const depositAddressIndex = pgSequence('deposit_address_index', { startWith: 1, minValue: 1 });

/** Deposits (spec §2.5): one per (network, transaction, output), ingested idempotently. */
export const deposits = pgTable(
  'deposits',
  {
    ...columns.ofBusiness(),
    paymentId: uuid('payment_id').notNull().references(() => payments.id),
    ...columns.chainOutput(),
    status: text('status').notNull(),
    /** What the chain says, independent of compliance: SEEN, CONFIRMED or DROPPED. */
    chainStatus: text('chain_status').notNull(),
    /** A deposit to an already final ONE_TIME payment (CONTRACT §5). */
    followUp: boolean('follow_up').notNull().default(false),
    /** Counted in the payment's actual amounts and the merchant's balance. */
    credited: boolean('credited').notNull().default(false),
    depositCurrency: text('deposit_currency').notNull(),
    amount: numeric('amount').notNull(),
    /** The part of `amount` credited to the merchant (less any refunded excess). */
    creditedAmount: numeric('credited_amount').notNull().default('0'),
    onChainFee: numeric('on_chain_fee').notNull(),
    ...columns.risk(),
    /** FIXED (the payment's locked rate) or MARKET (the rate when received). */
    rateSource: text('rate_source').notNull(),
    ...columns.valuation(),
    rateUniform: numeric('rate_uniform').notNull(),
    /** Computed amounts of spec §2.5, as decimal strings keyed by field name. */
    amounts: jsonb('amounts').$type<Record<string, string>>().notNull().default({}),
    receivedAt: instant('received_at').notNull(),
    confirmedAt: instant('confirmed_at'),
    /**
     * When a credit was taken back: the deposit was CONFIRMED and credited, then reorganised off the
     * chain for good (CONTRACT §10). The ledger holds the reversing entries; this marks the deposit.
     */
    creditReversedAt: instant('credit_reversed_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('deposits_chain_output').on(t.network, t.txHash, t.outputIndex),
    index('deposits_payment').on(t.paymentId, t.receivedAt),
    index('deposits_business_status').on(t.businessId, t.status),
  ],
);

/** Refunds (spec §2.7): at most one per deposit. */
export const refunds = pgTable('refunds', {
  id: uuid('id').primaryKey().defaultRandom(),
  depositId: uuid('deposit_id').notNull().unique().references(() => deposits.id),
  type: text('type').notNull(),
  status: text('status').notNull(),
  reason: text('reason').notNull(),
  depositCurrency: text('deposit_currency').notNull(),
  network: text('network').notNull(),
  toAddress: text('to_address').notNull(),
  amount: numeric('amount').notNull(),
  fee: numeric('fee').notNull(),
  displayCurrency: text('display_currency').notNull(),
  displayAmount: numeric('display_amount').notNull(),
  displayFee: numeric('display_fee').notNull(),
  transactionId: text('transaction_id'),
  /**
   * When the broadcast job claimed it, once its deposit was confirmed on chain: from then on it is
   * sent, never cancelled. A PENDING refund without it is cancelled (NON_REFUNDABLE) if its deposit
   * leaves the chain: Kassa never pays back what it did not keep.
   */
  sendingSince: instant('sending_since'),
  confirmedAt: instant('confirmed_at'),
  createdAt: createdAt(),
}, (t) => [
  // Live refunds claimed for sending and not final yet: what the signer asks the chain about every minute.
  index('refunds_unsettled').on(t.network).where(sql`status = 'PENDING' and sending_since is not null`),
]);

/**
 * Append-only ledger. Each row moves `amount` (signed) of `currency` on an
 * account of a business: MERCHANT is what the merchant may withdraw, FEES
 * is Kassa's service fee income.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    businessId: uuid('business_id').notNull().references(() => businesses.id),
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    amount: numeric('amount').notNull(),
    kind: text('kind').notNull(),
    depositId: uuid('deposit_id').references(() => deposits.id),
    withdrawalId: uuid('withdrawal_id'),
    at: instant('at').notNull(),
  },
  (t) => [index('ledger_business_account').on(t.businessId, t.account, t.currency)],
);

/**
 * Running balances: always the sum of the ledger entries, updated in the
 * same statement batch. A debit is refused when it would overdraw
 * (ledger.service.ts guards the UPDATE itself); only the reversal of a
 * credit the chain took back may take a balance below zero: the merchant
 * then owes it, and withdrawals wait until deposits cover it.
 */
export const balances = pgTable(
  'balances',
  {
    businessId: uuid('business_id').notNull().references(() => businesses.id),
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    amount: numeric('amount').notNull().default('0'),
  },
  (t) => [primaryKey({ columns: [t.businessId, t.account, t.currency] })],
);

/** The sandbox chain's simulated transactions. */
export const sandboxTransactions = pgTable(
  'sandbox_transactions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...columns.chainOutput(),
    // A simulated transfer has one output.
    outputIndex: integer('output_index').notNull().default(0),
    currency: text('currency').notNull(),
    amount: numeric('amount').notNull(),
    /** SEEN, CONFIRMED or DROPPED. */
    status: text('status').notNull(),
    /** Whether it will confirm (false: it is dropped after the delay). */
    willConfirm: boolean('will_confirm').notNull(),
    riskScore: numeric('risk_score'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sandbox_tx_output').on(t.network, t.txHash, t.outputIndex)],
);

/** Withdrawals (spec §6, CONTRACT §6). */
export const withdrawals = pgTable(
  'withdrawals',
  {
    ...columns.ofBusiness(),
    clientWithdrawalId: text('client_withdrawal_id').notNull(),
    requestHash: text('request_hash').notNull(),
    status: text('status').notNull(),
    withdrawCurrency: text('withdraw_currency').notNull(),
    network: text('network').notNull(),
    address: text('address').notNull(),
    destinationTag: text('destination_tag'),
    feePayer: text('fee_payer').notNull(),
    expectedDisplayAmount: numeric('expected_display_amount').notNull(),
    estimatedWithdrawAmount: numeric('estimated_withdraw_amount').notNull(),
    /** Debited from the MERCHANT balance when accepted; credited back on FAILED, BLOCKED, REJECTED. */
    deductedSettlementAmount: numeric('deducted_settlement_amount').notNull(),
    withdrawFee: numeric('withdraw_fee').notNull(),
    ...columns.valuation(),
    approvalsRequired: integer('approvals_required').notNull(),
    ...columns.risk(),
    /** Filled when the outcome is known. */
    actuals: jsonb('actuals').$type<Record<string, string>>(),
    transactionId: text('transaction_id'),
    createdAt: createdAt(),
    completedAt: instant('completed_at'),
  },
  (t) => [
    uniqueIndex('withdrawals_business_client_id').on(t.businessId, t.clientWithdrawalId),
    index('withdrawals_business_created').on(t.businessId, t.createdAt.desc(), t.id.desc()),
    // Withdrawals not final yet: in live mode, what the signer asks the chain about every minute.
    index('withdrawals_unsettled').on(t.network).where(sql`status = 'PROCESSING'`),
  ],
);

/** One row per operator decision; the unique index makes "a different operator" a database fact. */
export const withdrawalApprovals = pgTable(
  'withdrawal_approvals',
  {
    withdrawalId: uuid('withdrawal_id').notNull().references(() => withdrawals.id),
    operatorId: uuid('operator_id').notNull().references(() => operators.id),
    decision: text('decision').notNull(),
    at: instant('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.withdrawalId, t.operatorId] })],
);

export const whitelistedAddresses = pgTable(
  'whitelisted_addresses',
  {
    ...columns.ofBusiness(),
    currency: text('currency').notNull(),
    network: text('network').notNull(),
    address: text('address').notNull(),
    destinationTag: text('destination_tag').notNull().default(''),
    label: text('label'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('whitelist_unique').on(t.businessId, t.currency, t.network, t.address, t.destinationTag)],
);

/**
 * Callbacks to merchants (withdrawal outcomes, payment status changes). The
 * body is stored as the exact bytes sent, so every retry signs the same
 * content under the same webhook-id.
 */
export const callbackDeliveries = pgTable(
  'callback_deliveries',
  {
    ...columns.ofBusiness(),
    kind: text('kind').notNull(),
    subjectId: uuid('subject_id').notNull(),
    webhookId: text('webhook_id').notNull().unique(),
    url: text('url').notNull(),
    body: text('body').notNull(),
    /** PENDING, DELIVERED or EXPIRED (the retry window passed). */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Attempts made before the current schedule began (a redelivery starts a new one). */
    cycleStartAttempt: integer('cycle_start_attempt').notNull().default(0),
    firstAttemptAt: instant('first_attempt_at').notNull(),
    nextAttemptAt: instant('next_attempt_at'),
    deliveredAt: instant('delivered_at'),
    createdAt: createdAt(),
    /** The order of a subject's callbacks: a payment's go one at a time, in the order of its changes. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    /** While a dispatcher attempts it: until then no other takes it (a dead one's lease runs out). */
    lockedUntil: instant('locked_until'),
  },
  (t) => [
    index('callback_deliveries_subject').on(t.subjectId),
    // What the dispatcher claims (the pending, by due time) and what orders a subject's callbacks.
    index('callback_deliveries_due').on(t.nextAttemptAt).where(sql`${t.status} = 'PENDING'`),
    index('callback_deliveries_subject_pending').on(t.subjectId, t.seq).where(sql`${t.status} = 'PENDING'`),
  ],
);

export const callbackAttempts = pgTable(
  'callback_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: uuid('delivery_id').notNull().references(() => callbackDeliveries.id),
    attempt: integer('attempt').notNull(),
    startedAt: instant('started_at').notNull(),
    /** When the schedule planned it: first attempt + (attempt − 1) × interval. */
    plannedAt: instant('planned_at').notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    error: text('error'),
  },
  (t) => [uniqueIndex('callback_attempts_delivery_attempt').on(t.deliveryId, t.attempt)],
);

/**
 * Facts about this installation, one row each. `master_key_check` is an HMAC
 * of a fixed label under KASSA_MASTER_KEY: a process started with another key
 * is refused at start instead of failing to decrypt every secret.
 */
export const installation = pgTable('installation', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

/** Live rates (CONTRACT §11): the latest quote of each source per (crypto, fiat), shared by every process. */
export const rateQuotes = pgTable(
  'rate_quotes',
  {
    source: text('source').notNull(),
    base: text('base').notNull(),
    quote: text('quote').notNull(),
    price: numeric('price').notNull(),
    fetchedAt: instant('fetched_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.base, t.quote] }), check('rate_quotes_price_positive', sql`${t.price} > 0`)],
);

/** One row per rate source: its last round (GET /v1/rates), claimed atomically so processes share the work. */
export const rateSources = pgTable('rate_sources', {
  source: text('source').primaryKey(),
  lastAttemptAt: instant('last_attempt_at'),
  lastSuccessAt: instant('last_success_at'),
  lastFailureAt: instant('last_failure_at'),
  lastError: text('last_error'),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  quoteCount: integer('quote_count').notNull().default(0),
});

/** Sanctioned digital-currency addresses of an imported list (OFAC SDN), canonical per network. */
export const sanctionedAddresses = pgTable(
  'sanctioned_addresses',
  {
    list: text('list').notNull(),
    network: text('network').notNull(),
    address: text('address').notNull(),
    listedAddress: text('listed_address').notNull(),
    sdnCurrency: text('sdn_currency').notNull(),
    partyName: text('party_name').notNull(),
    partyRef: text('party_ref').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.list, t.network, t.address, t.partyRef, t.sdnCurrency] }),
    index('sanctioned_addresses_by_address').on(t.address, t.network),
  ],
);

/** One row per imported sanctions list: its presence is what "a list has been imported" means. */
export const sanctionsLists = pgTable('sanctions_lists', {
  list: text('list').primaryKey(),
  importedAt: instant('imported_at').notNull(),
  source: text('source').notNull(),
  published: text('published'),
  addressCount: integer('address_count').notNull(),
  counts: jsonb('counts').notNull(),
  skipped: jsonb('skipped').notNull(),
});

/**
 * Signatures of single-use requests (operations without an idempotency key, such as whitelisting an
 * address): one replayed inside the clock window is refused. Kept until the window of its timestamp
 * has passed; expired rows go as new ones come.
 */
export const usedSignatures = pgTable('used_signatures', {
  signature: text('signature').primaryKey(),
  expiresAt: instant('expires_at').notNull(),
});
