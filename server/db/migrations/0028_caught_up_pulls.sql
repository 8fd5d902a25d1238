ALTER TABLE `sync_connections` ADD `caught_up_at` integer;--> statement-breakpoint
ALTER TABLE `wallet_hub_links` DROP COLUMN `heard_at`;