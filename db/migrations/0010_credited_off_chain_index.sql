-- Credited deposits that a reorganisation took off the best chain are counted at every /ready and
-- /metrics read (kassa_chain_credited_off_chain): these partial indexes hold only those rows, so the
-- count does not read every deposit ever seen.
CREATE INDEX IF NOT EXISTS "evm_deposits_credited_off_chain" ON "evm_deposits" ("network") WHERE reorged_after_credit AND block_number IS NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "utxo_outputs_credited_off_chain" ON "utxo_outputs" ("network") WHERE reorged_after_credit AND block_height IS NULL;
