-- The UTXO scanner's last completed pass and the reorganisations it walked back, kept with its cursor
-- (as evm_scanner_state does for EVM) so that every process's /metrics reports them, not only the
-- worker that scans.
ALTER TABLE "utxo_cursor" ADD COLUMN IF NOT EXISTS "last_scan_at" timestamptz;
--> statement-breakpoint
ALTER TABLE "utxo_cursor" ADD COLUMN IF NOT EXISTS "reorg_count" integer NOT NULL DEFAULT 0;
