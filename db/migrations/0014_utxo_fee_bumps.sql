-- Every signed version of a BTC/LTC payout: the first, and each replacement at a higher fee
-- (BIP-125, same inputs, the fee taken from the change). The payout row holds the version in force;
-- any of them may be the one mined, so the signer looks them all up.
CREATE TABLE IF NOT EXISTS "utxo_payout_attempts" (
  "network" text NOT NULL,
  "txid" text NOT NULL,
  "payout_id" text NOT NULL,
  "raw_tx" text NOT NULL,
  "fee" bigint NOT NULL,
  "fee_rate" numeric NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  -- When it first became the payout's version in force (the first at once; a replacement once the
  -- node took it): a payout with two such versions was replaced, one whose replacements were all
  -- refused was not.
  "in_force_at" timestamptz,
  PRIMARY KEY ("network", "txid"),
  FOREIGN KEY ("network", "payout_id") REFERENCES "utxo_payouts" ("network", "id")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "utxo_payout_attempts_payout" ON "utxo_payout_attempts" ("network", "payout_id");
--> statement-breakpoint
-- Payouts signed before this upgrade: their one version so far.
INSERT INTO "utxo_payout_attempts" ("network", "txid", "payout_id", "raw_tx", "fee", "fee_rate", "created_at", "in_force_at")
  SELECT "network", "txid", "id", "raw_tx", "fee", "fee_rate", "created_at", "created_at" FROM "utxo_payouts"
  ON CONFLICT DO NOTHING;
