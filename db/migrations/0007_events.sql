-- One events table for every entity with a status (payments, deposits,
-- refunds, withdrawals) instead of four tables of the same shape. The rows
-- of the four are copied in the order they happened (time, then payment
-- before deposit before refund before withdrawal, then their own order), so
-- ordering by id stays the order of events.
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "events_entity_type" CHECK ("events"."entity_type" in ('payment', 'deposit', 'refund', 'withdrawal'))
);
--> statement-breakpoint
CREATE INDEX "events_entity" ON "events" USING btree ("entity_type","entity_id","id");
--> statement-breakpoint
INSERT INTO "events" ("entity_type", "entity_id", "from_status", "to_status", "reason", "data", "at")
SELECT entity_type, entity_id, from_status, to_status, reason, data, at FROM (
  SELECT 'payment' AS entity_type, 1 AS rank, payment_id AS entity_id, id, from_status, to_status, reason, data, at FROM "payment_events"
  UNION ALL SELECT 'deposit', 2, deposit_id, id, from_status, to_status, reason, data, at FROM "deposit_events"
  UNION ALL SELECT 'refund', 3, refund_id, id, from_status, to_status, reason, data, at FROM "refund_events"
  UNION ALL SELECT 'withdrawal', 4, withdrawal_id, id, from_status, to_status, reason, data, at FROM "withdrawal_events"
) old ORDER BY at, rank, id;
--> statement-breakpoint
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON "events" FOR EACH ROW EXECUTE FUNCTION kassa_append_only();
--> statement-breakpoint
-- A payment's creation still writes its first event in the INSERT's own statement (0001).
CREATE OR REPLACE FUNCTION kassa_payment_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (entity_type, entity_id, from_status, to_status, reason, at)
    VALUES ('payment', NEW.id, NULL, NEW.status, 'created', NEW.created_at);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TABLE "deposit_events";
--> statement-breakpoint
DROP TABLE "payment_events";
--> statement-breakpoint
DROP TABLE "refund_events";
--> statement-breakpoint
DROP TABLE "withdrawal_events";
