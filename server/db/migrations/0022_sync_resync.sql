ALTER TABLE `sync_connections` ADD `hub_epoch` text;--> statement-breakpoint
ALTER TABLE `sync_connections` ADD `resyncing` integer DEFAULT false NOT NULL;