DROP INDEX "callback_deliveries_due";--> statement-breakpoint
ALTER TABLE "callback_deliveries" ADD COLUMN "seq" bigint NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "callback_deliveries_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
ALTER TABLE "callback_deliveries" ADD COLUMN "locked_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "callback_deliveries_subject_pending" ON "callback_deliveries" USING btree ("subject_id","seq") WHERE "callback_deliveries"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "callback_deliveries_due" ON "callback_deliveries" USING btree ("next_attempt_at") WHERE "callback_deliveries"."status" = 'PENDING';--> statement-breakpoint
-- Callbacks are no longer graphile-worker jobs (one per attempt, a named queue per payment): the
-- worker's dispatcher claims due deliveries from this table (server/modules/callbacks/dispatcher.ts).
-- A new delivery wakes it in every worker process, at commit.
CREATE OR REPLACE FUNCTION kassa_callback_enqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kassa_callback_due', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER callback_deliveries_enqueued AFTER INSERT ON "callback_deliveries" FOR EACH STATEMENT EXECUTE FUNCTION kassa_callback_enqueued();
--> statement-breakpoint
-- The jobs of the old design would wait forever for a task no process runs any more; their
-- deliveries are PENDING with next_attempt_at set, so the dispatcher takes them over.
DO $$
BEGIN
  IF to_regclass('graphile_worker._private_jobs') IS NOT NULL THEN
    DELETE FROM graphile_worker._private_jobs j USING graphile_worker._private_tasks t
      WHERE t.id = j.task_id AND t.identifier IN ('deliver_callback', 'sweep_callbacks');
    DELETE FROM graphile_worker._private_job_queues q
      WHERE q.queue_name LIKE 'callbacks:%' AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs j WHERE j.job_queue_id = q.id);
  END IF;
END $$;
