-- A credit the chain took back (CONTRACT §10) is reversed by ledger entries, and may leave the
-- merchant owing: the balance goes below zero. Overdrafts by withdrawals are refused by the debit's
-- own guarded UPDATE (ledger.service.ts) instead of this CHECK. A refund is sent only once its
-- deposit is confirmed on chain; `sending_since` marks the broadcast job's claim on it.
ALTER TABLE "balances" DROP CONSTRAINT "balances_not_negative";--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "credit_reversed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "sending_since" timestamp with time zone;--> statement-breakpoint
-- A credited UTXO deposit that is in no block of the best chain and not in the mempool: the tip
-- at which the scanner first found it so. It is DROPPED (and its credit reversed) once it stays
-- gone for the network's confirmations (server/adapters/chain/utxo/scanner.rules.ts).
ALTER TABLE "utxo_outputs" ADD COLUMN IF NOT EXISTS "gone_since_tip" integer;
--> statement-breakpoint
-- Refunds still PENDING at this upgrade were enqueued at once by the code before it, and may have
-- been sent already: they count as claimed, so that a deposit leaving the chain never cancels one.
UPDATE "refunds" SET "sending_since" = "created_at" WHERE "status" = 'PENDING';
