-- An EVM transfer DROPPED (off the best chain past its grace) may be mined again later: the scanner
-- then reports it SEEN and CONFIRMED again, and Kassa judges it again. `drops` counts how often it
-- was DROPPED; a CONFIRMED report stays unique per transfer within each such round.
ALTER TABLE "evm_deposits" ADD COLUMN IF NOT EXISTS "drops" integer NOT NULL DEFAULT 0;
--> statement-breakpoint
ALTER TABLE "evm_deposit_events" ADD COLUMN IF NOT EXISTS "round" integer NOT NULL DEFAULT 0;
--> statement-breakpoint
-- Transfers dropped before this upgrade: their rounds so far, so that a CONFIRMED once they are
-- mined again is a new round, not a duplicate of the one they had.
UPDATE "evm_deposits" d SET "drops" = s.n
  FROM (SELECT network, tx_hash, output_index, count(*)::int AS n FROM "evm_deposit_events" WHERE state = 'DROPPED'
        GROUP BY network, tx_hash, output_index) s
 WHERE d.network = s.network AND d.tx_hash = s.tx_hash AND d.output_index = s.output_index;
--> statement-breakpoint
DROP INDEX IF EXISTS "evm_deposit_events_confirmed_once";
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "evm_deposit_events_confirmed_once_a_round"
  ON "evm_deposit_events" ("network", "tx_hash", "output_index", "round") WHERE "state" = 'CONFIRMED';
