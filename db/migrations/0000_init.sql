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
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"display_currency" text,
	"expected_display_amount" numeric,
	"expected_display_fee" numeric,
	"deposit_currency" text,
	"network" text,
	"expected_deposit_amount" numeric,
	"expected_deposit_fee" numeric,
	"expected_uniform_amount" numeric,
	"locked_rate" numeric,
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
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_events" ADD CONSTRAINT "payment_events_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_events_payment" ON "payment_events" USING btree ("payment_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_business_client_id" ON "payments" USING btree ("business_id","client_payment_id");--> statement-breakpoint
CREATE INDEX "payments_business_created" ON "payments" USING btree ("business_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "payments_address_tag" ON "payments" USING btree ("network","wallet_address","destination_tag");