-- An EVM transfer DROPPED (off the best chain past its grace) may be mined again later: the scanner
-- then reports it SEEN and CONFIRMED again, and Kassa judges it again. `drops` counts how often it
-- was DROPPED; a CONFIRMED report stays unique per transfer within each such round.
ALTER TABLE "evm_deposits" ADD COLUMN IF NOT EXISTS "drops" integer NOT NULL DEFAULT 0;
--> statement-breakpoint
ALTER TABLE "evm_deposit_events" ADD COLUMN IF NOT EXISTS "round" integer NOT NULL DEFAULT 0;
--> statement-breakpoint
DROP INDEX IF EXISTS "evm_deposit_events_confirmed_once";
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "evm_deposit_events_confirmed_once_a_round"
  ON "evm_deposit_events" ("network", "tx_hash", "output_index", "round") WHERE "state" = 'CONFIRMED';
