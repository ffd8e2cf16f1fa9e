CREATE TABLE "rate_quotes" (
	"source" text NOT NULL,
	"base" text NOT NULL,
	"quote" text NOT NULL,
	"price" numeric NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rate_quotes_source_base_quote_pk" PRIMARY KEY("source","base","quote"),
	CONSTRAINT "rate_quotes_price_positive" CHECK ("rate_quotes"."price" > 0)
);
--> statement-breakpoint
CREATE TABLE "rate_sources" (
	"source" text PRIMARY KEY NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"last_failure_at" timestamp with time zone,
	"last_error" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"quote_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sanctioned_addresses" (
	"list" text NOT NULL,
	"network" text NOT NULL,
	"address" text NOT NULL,
	"listed_address" text NOT NULL,
	"sdn_currency" text NOT NULL,
	"party_name" text NOT NULL,
	"party_ref" text NOT NULL,
	CONSTRAINT "sanctioned_addresses_list_network_address_party_ref_sdn_currency_pk" PRIMARY KEY("list","network","address","party_ref","sdn_currency")
);
--> statement-breakpoint
CREATE TABLE "sanctions_lists" (
	"list" text PRIMARY KEY NOT NULL,
	"imported_at" timestamp with time zone NOT NULL,
	"source" text NOT NULL,
	"published" text,
	"address_count" integer NOT NULL,
	"counts" jsonb NOT NULL,
	"skipped" jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "pricing_rate" jsonb;--> statement-breakpoint
CREATE INDEX "sanctioned_addresses_by_address" ON "sanctioned_addresses" USING btree ("address","network");