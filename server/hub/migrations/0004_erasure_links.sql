CREATE TABLE "hub_erasure_links" (
	"cabinet_id" text NOT NULL,
	"kind" text NOT NULL,
	"record_id" text NOT NULL,
	CONSTRAINT "hub_erasure_links_cabinet_id_kind_record_id_pk" PRIMARY KEY("cabinet_id","kind","record_id")
);
--> statement-breakpoint
ALTER TABLE "hub_erasure_links" ADD CONSTRAINT "hub_erasure_links_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;