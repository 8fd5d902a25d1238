CREATE TABLE "hub_records" (
	"cabinet_id" text NOT NULL,
	"kind" text NOT NULL,
	"record_id" text NOT NULL,
	"fields" jsonb NOT NULL,
	"stamps" jsonb NOT NULL,
	"erased" boolean DEFAULT false NOT NULL,
	"last_seq" bigint NOT NULL,
	"device_id" text NOT NULL,
	"bytes" integer NOT NULL,
	CONSTRAINT "hub_records_cabinet_id_kind_record_id_pk" PRIMARY KEY("cabinet_id","kind","record_id")
);
--> statement-breakpoint
DROP INDEX "hub_changes_erasures";--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "retained_from_seq" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_records" ADD CONSTRAINT "hub_records_cabinet_id_hub_cabinets_id_fk" FOREIGN KEY ("cabinet_id") REFERENCES "public"."hub_cabinets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hub_records_erased" ON "hub_records" USING btree ("cabinet_id","kind") WHERE "hub_records"."erased";--> statement-breakpoint
-- Each record's state from the changes the hub holds, as the push keeps it from now on (server/hub/records.ts).
INSERT INTO "hub_records" ("cabinet_id", "kind", "record_id", "fields", "stamps", "erased", "last_seq", "device_id", "bytes")
WITH "keys" AS (
	SELECT "cabinet_id", "kind", "record_id", max("seq") AS "last_seq", bool_or("op" = 'erase') AS "erased" FROM "hub_changes" GROUP BY "cabinet_id", "kind", "record_id"
),
"winners" AS (
	SELECT DISTINCT ON (h."cabinet_id", h."kind", h."record_id", f.key) h."cabinet_id", h."kind", h."record_id", f.key, f.value, h."hlc" AS "stamp"
	FROM "hub_changes" h JOIN "keys" k ON k."cabinet_id" = h."cabinet_id" AND k."kind" = h."kind" AND k."record_id" = h."record_id", jsonb_each(h."fields") f
	WHERE (h."op" = 'erase') = k."erased"
	ORDER BY h."cabinet_id", h."kind", h."record_id", f.key, h."hlc" COLLATE "C" DESC, h."seq"
),
"merged" AS (
	SELECT k."cabinet_id", k."kind", k."record_id", k."last_seq", k."erased",
		coalesce(jsonb_object_agg(w.key, w.value) FILTER (WHERE w.key IS NOT NULL), '{}'::jsonb) AS "fields",
		coalesce(jsonb_object_agg(w.key, w."stamp") FILTER (WHERE w.key IS NOT NULL), '{}'::jsonb) AS "stamps"
	FROM "keys" k LEFT JOIN "winners" w ON w."cabinet_id" = k."cabinet_id" AND w."kind" = k."kind" AND w."record_id" = k."record_id"
	GROUP BY k."cabinet_id", k."kind", k."record_id", k."last_seq", k."erased"
)
SELECT m."cabinet_id", m."kind", m."record_id", m."fields", m."stamps", m."erased", m."last_seq", h."device_id", octet_length(m."fields"::text)
FROM "merged" m JOIN "hub_changes" h ON h."cabinet_id" = m."cabinet_id" AND h."seq" = m."last_seq";
