CREATE TABLE "hub_audit_events" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "hub_audit_events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone NOT NULL,
	"action" text NOT NULL,
	"result" text NOT NULL,
	"actor_kind" text NOT NULL,
	"actor_id" text,
	"actor_label" text,
	"cabinet_id" text,
	"address" text,
	"target" text,
	"details" jsonb NOT NULL,
	"seal" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "hub_audit_events_cabinet" ON "hub_audit_events" USING btree ("cabinet_id","seq");