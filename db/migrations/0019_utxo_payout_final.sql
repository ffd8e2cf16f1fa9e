-- When a UTXO payout was found final (its block deep enough on the best chain): the signer's pass
-- tends every payout not final, whatever its age (it looked at the last 7 days only, so one evicted
-- from the mempools after that was never sent again). Payouts older than that window were out of the
-- pass already: they count as final, as they did.
ALTER TABLE "utxo_payouts" ADD COLUMN IF NOT EXISTS "final_at" timestamptz;
--> statement-breakpoint
UPDATE "utxo_payouts" SET "final_at" = now() WHERE "final_at" IS NULL AND "created_at" <= now() - interval '7 days';
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "utxo_payouts_not_final" ON "utxo_payouts" ("network", "created_at") WHERE "final_at" IS NULL;
