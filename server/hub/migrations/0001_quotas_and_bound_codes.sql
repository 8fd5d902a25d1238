ALTER TABLE "hub_cabinets" ADD COLUMN "changes_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "changes_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "blobs_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_cabinets" ADD COLUMN "blobs_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_changes" ADD COLUMN "bytes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_invites" ADD COLUMN "registers_cabinet_id" text;--> statement-breakpoint
-- What a hub already holds: the sizes of its changes, and each cabinet's counts for its quotas.
UPDATE "hub_changes" SET "bytes" = octet_length("fields"::text);--> statement-breakpoint
UPDATE "hub_cabinets" c SET
  "changes_count" = (SELECT count(*) FROM "hub_changes" h WHERE h."cabinet_id" = c."id"),
  "changes_bytes" = (SELECT coalesce(sum(h."bytes"), 0) FROM "hub_changes" h WHERE h."cabinet_id" = c."id"),
  "blobs_count" = (SELECT count(*) FROM "hub_blobs" b WHERE b."cabinet_id" = c."id"),
  "blobs_bytes" = (SELECT coalesce(sum(b."size"), 0) FROM "hub_blobs" b WHERE b."cabinet_id" = c."id");--> statement-breakpoint
-- A code made to register "whatever cabinet the install brings" is no longer accepted: the operator names the cabinet.
DELETE FROM "hub_invites" WHERE "cabinet_id" IS NULL AND "used_at" IS NULL;
