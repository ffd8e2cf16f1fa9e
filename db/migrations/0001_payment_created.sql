-- A payment's creation writes its first event row in the INSERT's own
-- statement, so creating is one round trip, atomic without BEGIN/COMMIT.
-- (Its expiry is scheduled from expires_at by the sweep_expiries cron:
-- server/payments/expiry.ts.)
CREATE OR REPLACE FUNCTION kassa_payment_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_events (payment_id, from_status, to_status, reason, at)
    VALUES (NEW.id, NULL, NEW.status, 'created', NEW.created_at);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER payments_created AFTER INSERT ON "payments" FOR EACH ROW EXECUTE FUNCTION kassa_payment_created();
