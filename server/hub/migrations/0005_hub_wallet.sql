CREATE TABLE "hub_wallet_entries" (
	"cabinet_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"entry_id" text NOT NULL,
	"kind" text NOT NULL,
	"amount" integer NOT NULL,
	"job_id" text,
	"device_id" text,
	"note" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "hub_wallet_entries_cabinet_id_seq_pk" PRIMARY KEY("cabinet_id","seq"),
	CONSTRAINT "hub_wallet_entries_entry" UNIQUE("cabinet_id","entry_id"),
	CONSTRAINT "hub_wallet_entries_kind" CHECK ("hub_wallet_entries"."kind" in ('grant', 'debit', 'refund', 'opening'))
);
--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "wallet_balance" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "wallet_next_seq" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "registered_by" text;--> statement-breakpoint
ALTER TABLE "hub_wallet_entries" ADD CONSTRAINT "hub_wallet_entries_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_wallet_entries" ADD CONSTRAINT "hub_wallet_entries_device_id_hub_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."hub_devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "hub_wallet_entries_job_once" ON "hub_wallet_entries" USING btree ("cabinet_id","device_id","job_id","kind") WHERE "hub_wallet_entries"."job_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "hub_wallet_entries_opening_once" ON "hub_wallet_entries" USING btree ("cabinet_id") WHERE "hub_wallet_entries"."kind" = 'opening';