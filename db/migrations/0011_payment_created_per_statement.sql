-- A payment's creation event is still written in the INSERT's own statement (0001, 0007), now once
-- per statement from its transition table instead of once per row: the create path inserts a
-- batch of payments in one statement (server/modules/payments/payment.service.ts), and a PL/pgSQL
-- call with its own INSERT per row was 16% of PostgreSQL's CPU per create (perf, bench scenario 1).
-- Rows that ON CONFLICT DO NOTHING skipped are not in the transition table, so get no event.
CREATE OR REPLACE FUNCTION kassa_payments_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (entity_type, entity_id, from_status, to_status, reason, at)
    SELECT 'payment', id, NULL, status, 'created', created_at FROM created_payments;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER payments_created_events AFTER INSERT ON "payments" REFERENCING NEW TABLE AS created_payments
  FOR EACH STATEMENT EXECUTE FUNCTION kassa_payments_created();
--> statement-breakpoint
DROP TRIGGER payments_created ON "payments";
--> statement-breakpoint
DROP FUNCTION kassa_payment_created();
