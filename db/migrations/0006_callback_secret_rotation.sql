CREATE TABLE "previous_callback_secrets" (
	"business_id" uuid PRIMARY KEY NOT NULL,
	"secret_enc" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "previous_callback_secrets" ADD CONSTRAINT "previous_callback_secrets_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;