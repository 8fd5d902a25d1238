CREATE TABLE "hub_blobs" (
	"cabinet_id" text NOT NULL,
	"sha256" text NOT NULL,
	"content" "bytea" NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "hub_blobs_cabinet_id_sha256_pk" PRIMARY KEY("cabinet_id","sha256")
);
--> statement-breakpoint
CREATE TABLE "hub_cabinets" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"next_seq" bigint DEFAULT 1 NOT NULL,
	"highest_protocol" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hub_changes" (
	"cabinet_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"device_id" text NOT NULL,
	"number" bigint NOT NULL,
	"kind" text NOT NULL,
	"record_id" text NOT NULL,
	"op" text NOT NULL,
	"hlc" text NOT NULL,
	"fields" jsonb NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "hub_changes_cabinet_id_seq_pk" PRIMARY KEY("cabinet_id","seq"),
	CONSTRAINT "hub_changes_device_number" UNIQUE("cabinet_id","device_id","number"),
	CONSTRAINT "hub_changes_op" CHECK ("hub_changes"."op" in ('upsert', 'erase'))
);
--> statement-breakpoint
CREATE TABLE "hub_devices" (
	"id" text PRIMARY KEY NOT NULL,
	"cabinet_id" text NOT NULL,
	"name" text NOT NULL,
	"credential_hash" text NOT NULL,
	"last_number" bigint DEFAULT 0 NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hub_invites" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"cabinet_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hub_pairing_failures" (
	"address" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "hub_pairing_failures_address_window_start_pk" PRIMARY KEY("address","window_start")
);
--> statement-breakpoint
ALTER TABLE "hub_blobs" ADD CONSTRAINT "hub_blobs_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_changes" ADD CONSTRAINT "hub_changes_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_changes" ADD CONSTRAINT "hub_changes_device_id_hub_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."hub_devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_devices" ADD CONSTRAINT "hub_devices_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_invites" ADD CONSTRAINT "hub_invites_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hub_changes_record" ON "hub_changes" USING btree ("cabinet_id","kind","record_id");--> statement-breakpoint
CREATE INDEX "hub_changes_erasures" ON "hub_changes" USING btree ("cabinet_id","kind","record_id") WHERE "hub_changes"."op" = 'erase';--> statement-breakpoint
CREATE INDEX "hub_devices_cabinet" ON "hub_devices" USING btree ("cabinet_id");--> statement-breakpoint
CREATE INDEX "hub_invites_expires" ON "hub_invites" USING btree ("expires_at");