-- When a UTXO payout was found final (its block deep enough on the best chain): the signer's pass
-- tends every payout not final, whatever its age (it looked at the last 7 days only, so one evicted
-- from the mempools after that was never sent again). A payout whose withdrawal or refund has already
-- ended (broadcast ids 'withdrawal:<id>', 'refund:<id>') counts as final; only those still waiting for
-- their outcome stay open.
ALTER TABLE "utxo_payouts" ADD COLUMN IF NOT EXISTS "final_at" timestamptz;
--> statement-breakpoint
UPDATE "utxo_payouts" p SET "final_at" = now()
 WHERE p."final_at" IS NULL
   AND NOT EXISTS (SELECT 1 FROM "withdrawals" w WHERE p."id" = 'withdrawal:' || w."id" AND w."status" = 'PROCESSING')
   AND NOT EXISTS (SELECT 1 FROM "refunds" r WHERE p."id" = 'refund:' || r."id" AND r."status" = 'PENDING');
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "utxo_payouts_not_final" ON "utxo_payouts" ("network", "created_at") WHERE "final_at" IS NULL;
