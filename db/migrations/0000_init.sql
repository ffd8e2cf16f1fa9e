CREATE SEQUENCE "public"."deposit_address_index" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"key" text NOT NULL,
	"secret_enc" text NOT NULL,
	"scopes" text[] NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "balances" (
	"business_id" uuid NOT NULL,
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric DEFAULT '0' NOT NULL,
	CONSTRAINT "balances_business_id_account_currency_pk" PRIMARY KEY("business_id","account","currency"),
	CONSTRAINT "balances_not_negative" CHECK ("balances"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "businesses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"settlement_currency" text DEFAULT 'EUR' NOT NULL,
	"service_fee_percent" numeric DEFAULT '1' NOT NULL,
	"user_fee_share_percent" numeric DEFAULT '0' NOT NULL,
	"overpayment_policy" text DEFAULT 'PROCESS' NOT NULL,
	"refund_follow_up_deposits" boolean DEFAULT false NOT NULL,
	"allowed_networks" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"withdrawal_callback_url" text,
	"payment_callback_url" text,
	"callback_secret_enc" text NOT NULL,
	"risk_review_threshold" numeric DEFAULT '5' NOT NULL,
	"risk_block_threshold" numeric DEFAULT '8' NOT NULL,
	"approval_policy" text DEFAULT 'NONE' NOT NULL,
	"require_whitelist" boolean DEFAULT false NOT NULL,
	"default_fee_payer" text DEFAULT 'BUSINESS' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "callback_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"planned_at" timestamp with time zone NOT NULL,
	"status_code" integer,
	"latency_ms" integer NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "callback_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"webhook_id" text NOT NULL,
	"url" text NOT NULL,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"cycle_start_attempt" integer DEFAULT 0 NOT NULL,
	"first_attempt_at" timestamp with time zone NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "callback_deliveries_webhook_id_unique" UNIQUE("webhook_id")
);
--> statement-breakpoint
CREATE TABLE "deposit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"deposit_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"payment_id" uuid NOT NULL,
	"business_id" uuid NOT NULL,
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"output_index" integer NOT NULL,
	"status" text NOT NULL,
	"chain_status" text NOT NULL,
	"follow_up" boolean DEFAULT false NOT NULL,
	"credited" boolean DEFAULT false NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"destination_tag" text,
	"deposit_currency" text NOT NULL,
	"amount" numeric NOT NULL,
	"credited_amount" numeric DEFAULT '0' NOT NULL,
	"on_chain_fee" numeric NOT NULL,
	"risk_score" numeric NOT NULL,
	"risk_assessment" jsonb NOT NULL,
	"rate_source" text NOT NULL,
	"display_currency" text NOT NULL,
	"settlement_currency" text NOT NULL,
	"rate_display" numeric NOT NULL,
	"rate_settlement" numeric NOT NULL,
	"rate_uniform" numeric NOT NULL,
	"amounts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"business_id" uuid NOT NULL,
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric NOT NULL,
	"kind" text NOT NULL,
	"deposit_id" uuid,
	"withdrawal_id" uuid,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operators" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "operators_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "payment_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payment_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"client_payment_id" text NOT NULL,
	"request_hash" text NOT NULL,
	"checkout_token" text NOT NULL,
	"status" text NOT NULL,
	"type" text NOT NULL,
	"rate_type" text NOT NULL,
	"locale" text NOT NULL,
	"priced_in" text NOT NULL,
	"display_currency" text,
	"expected_display_amount" numeric,
	"expected_display_fee" numeric,
	"deposit_currency" text,
	"network" text,
	"expected_deposit_amount" numeric,
	"expected_deposit_fee" numeric,
	"expected_uniform_amount" numeric,
	"locked_rate" numeric,
	"locked_rate_settlement" numeric,
	"locked_rate_uniform" numeric,
	"settlement_currency" text NOT NULL,
	"risk_review_threshold" numeric NOT NULL,
	"risk_block_threshold" numeric NOT NULL,
	"service_fee_percent" numeric NOT NULL,
	"user_fee_share_percent" numeric NOT NULL,
	"overpayment_policy" text NOT NULL,
	"refund_follow_up_deposits" boolean NOT NULL,
	"wallet_address" text,
	"destination_tag" text,
	"redirect_url" text,
	"redirect_mode" text NOT NULL,
	"expiration_minutes" integer NOT NULL,
	"expires_at" timestamp with time zone,
	"initiated_by" text NOT NULL,
	"initiated_at" timestamp with time zone NOT NULL,
	"requested_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payments_checkout_token_unique" UNIQUE("checkout_token")
);
--> statement-breakpoint
CREATE TABLE "refund_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"refund_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "refunds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"deposit_id" uuid NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"deposit_currency" text NOT NULL,
	"network" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric NOT NULL,
	"fee" numeric NOT NULL,
	"display_currency" text NOT NULL,
	"display_amount" numeric NOT NULL,
	"display_fee" numeric NOT NULL,
	"transaction_id" text,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refunds_deposit_id_unique" UNIQUE("deposit_id")
);
--> statement-breakpoint
CREATE TABLE "sandbox_transactions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"output_index" integer DEFAULT 0 NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"destination_tag" text,
	"currency" text NOT NULL,
	"amount" numeric NOT NULL,
	"status" text NOT NULL,
	"will_confirm" boolean NOT NULL,
	"risk_score" numeric,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "whitelisted_addresses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"network" text NOT NULL,
	"address" text NOT NULL,
	"destination_tag" text DEFAULT '' NOT NULL,
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "withdrawal_approvals" (
	"withdrawal_id" uuid NOT NULL,
	"operator_id" uuid NOT NULL,
	"decision" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "withdrawal_approvals_withdrawal_id_operator_id_pk" PRIMARY KEY("withdrawal_id","operator_id")
);
--> statement-breakpoint
CREATE TABLE "withdrawal_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"withdrawal_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "withdrawals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"client_withdrawal_id" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" text NOT NULL,
	"withdraw_currency" text NOT NULL,
	"network" text NOT NULL,
	"address" text NOT NULL,
	"destination_tag" text,
	"display_currency" text NOT NULL,
	"settlement_currency" text NOT NULL,
	"fee_payer" text NOT NULL,
	"expected_display_amount" numeric NOT NULL,
	"estimated_withdraw_amount" numeric NOT NULL,
	"deducted_settlement_amount" numeric NOT NULL,
	"withdraw_fee" numeric NOT NULL,
	"rate_display" numeric NOT NULL,
	"rate_settlement" numeric NOT NULL,
	"approvals_required" integer NOT NULL,
	"risk_score" numeric NOT NULL,
	"risk_assessment" jsonb NOT NULL,
	"actuals" jsonb,
	"transaction_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "balances" ADD CONSTRAINT "balances_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "callback_attempts" ADD CONSTRAINT "callback_attempts_delivery_id_callback_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."callback_deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "callback_deliveries" ADD CONSTRAINT "callback_deliveries_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposit_events" ADD CONSTRAINT "deposit_events_deposit_id_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."deposits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposits" ADD CONSTRAINT "deposits_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposits" ADD CONSTRAINT "deposits_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_deposit_id_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."deposits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_events" ADD CONSTRAINT "payment_events_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refund_events" ADD CONSTRAINT "refund_events_refund_id_refunds_id_fk" FOREIGN KEY ("refund_id") REFERENCES "public"."refunds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_deposit_id_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."deposits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "whitelisted_addresses" ADD CONSTRAINT "whitelisted_addresses_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawal_approvals" ADD CONSTRAINT "withdrawal_approvals_withdrawal_id_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."withdrawals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawal_approvals" ADD CONSTRAINT "withdrawal_approvals_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawal_events" ADD CONSTRAINT "withdrawal_events_withdrawal_id_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."withdrawals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "callback_attempts_delivery_attempt" ON "callback_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "callback_deliveries_subject" ON "callback_deliveries" USING btree ("subject_id");--> statement-breakpoint
CREATE INDEX "callback_deliveries_due" ON "callback_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "deposit_events_deposit" ON "deposit_events" USING btree ("deposit_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "deposits_chain_output" ON "deposits" USING btree ("network","tx_hash","output_index");--> statement-breakpoint
CREATE INDEX "deposits_payment" ON "deposits" USING btree ("payment_id","received_at");--> statement-breakpoint
CREATE INDEX "deposits_business_status" ON "deposits" USING btree ("business_id","status");--> statement-breakpoint
CREATE INDEX "ledger_business_account" ON "ledger_entries" USING btree ("business_id","account","currency");--> statement-breakpoint
CREATE INDEX "payment_events_payment" ON "payment_events" USING btree ("payment_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_business_client_id" ON "payments" USING btree ("business_id","client_payment_id");--> statement-breakpoint
CREATE INDEX "payments_business_created" ON "payments" USING btree ("business_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "payments_address_tag" ON "payments" USING btree ("network","wallet_address","destination_tag");--> statement-breakpoint
CREATE INDEX "payments_wallet" ON "payments" USING btree ("wallet_address");--> statement-breakpoint
CREATE INDEX "refund_events_refund" ON "refund_events" USING btree ("refund_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "sandbox_tx_output" ON "sandbox_transactions" USING btree ("network","tx_hash","output_index");--> statement-breakpoint
CREATE UNIQUE INDEX "whitelist_unique" ON "whitelisted_addresses" USING btree ("business_id","currency","network","address","destination_tag");--> statement-breakpoint
CREATE INDEX "withdrawal_events_withdrawal" ON "withdrawal_events" USING btree ("withdrawal_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "withdrawals_business_client_id" ON "withdrawals" USING btree ("business_id","client_withdrawal_id");--> statement-breakpoint
CREATE INDEX "withdrawals_business_created" ON "withdrawals" USING btree ("business_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
--> statement-breakpoint
-- Event tables and the ledger are append-only: refuse updates and deletes in the database itself.
CREATE OR REPLACE FUNCTION kassa_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
--> statement-breakpoint
CREATE TRIGGER payment_events_append_only BEFORE UPDATE OR DELETE ON "payment_events" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
CREATE TRIGGER deposit_events_append_only BEFORE UPDATE OR DELETE ON "deposit_events" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
CREATE TRIGGER refund_events_append_only BEFORE UPDATE OR DELETE ON "refund_events" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON "ledger_entries" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
CREATE TRIGGER withdrawal_events_append_only BEFORE UPDATE OR DELETE ON "withdrawal_events" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
CREATE TRIGGER callback_attempts_append_only BEFORE UPDATE OR DELETE ON "callback_attempts" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
