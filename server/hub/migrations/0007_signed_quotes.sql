ALTER TABLE "hub_records" ADD COLUMN "signed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_records" ADD COLUMN "signed_pdf" text;--> statement-breakpoint
-- Quotes signed by their state, by a change still held or by a contract that names them (as the fold marks them from now on, server/hub/records.ts), with the PDF they name.
UPDATE "hub_records" r SET "signed" = true, "signed_pdf" = coalesce(
	CASE WHEN jsonb_typeof(r."fields"->'pdf_sha256') = 'string' THEN r."fields"->>'pdf_sha256' END,
	(SELECT h."fields"->>'pdf_sha256' FROM "hub_changes" h
		WHERE h."cabinet_id" = r."cabinet_id" AND h."kind" = 'devis' AND h."record_id" = r."record_id" AND h."op" = 'upsert' AND jsonb_typeof(h."fields"->'pdf_sha256') = 'string'
		ORDER BY h."hlc" COLLATE "C" DESC, h."seq" LIMIT 1))
WHERE r."kind" = 'devis' AND (
	r."fields"->>'status' = 'signed' OR r."fields"->>'contract_id' IS NOT NULL OR r."fields"->>'signed_at' IS NOT NULL
	OR EXISTS (SELECT 1 FROM "hub_changes" h WHERE h."cabinet_id" = r."cabinet_id" AND h."kind" = 'devis' AND h."record_id" = r."record_id" AND h."op" = 'upsert'
		AND (h."fields"->>'status' = 'signed' OR h."fields"->>'contract_id' IS NOT NULL OR h."fields"->>'signed_at' IS NOT NULL))
	OR EXISTS (SELECT 1 FROM "hub_records" c WHERE c."cabinet_id" = r."cabinet_id" AND c."kind" = 'contract' AND c."fields"->>'devis_id' = r."record_id")
	OR EXISTS (SELECT 1 FROM "hub_changes" c WHERE c."cabinet_id" = r."cabinet_id" AND c."kind" = 'contract' AND c."op" = 'upsert' AND c."fields"->>'devis_id' = r."record_id"));
--> statement-breakpoint
-- Each state's size counts its stamps too, as the fold writes it: a state page is bounded by it, and so is a record's state.
UPDATE "hub_records" SET "bytes" = octet_length("fields"::text) + octet_length("stamps"::text) WHERE "bytes" <> octet_length("fields"::text) + octet_length("stamps"::text);
--> statement-breakpoint
-- Quota counters that erasures left behind (scrubbed changes were uncounted at their new size, erased PDFs not at all): counted again from what is held.
UPDATE "hub_cabinets" c SET
	"changes_count" = coalesce((SELECT count(*) FROM "hub_changes" h WHERE h."cabinet_id" = c."id"), 0),
	"changes_bytes" = coalesce((SELECT sum(h."bytes") FROM "hub_changes" h WHERE h."cabinet_id" = c."id"), 0),
	"blobs_count" = coalesce((SELECT count(*) FROM "hub_blobs" b WHERE b."cabinet_id" = c."id"), 0),
	"blobs_bytes" = coalesce((SELECT sum(b."size") FROM "hub_blobs" b WHERE b."cabinet_id" = c."id"), 0);
