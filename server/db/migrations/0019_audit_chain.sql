CREATE TABLE `audit_chain_start` (
	`id` integer PRIMARY KEY NOT NULL,
	`chain` text NOT NULL,
	`purged_at` integer,
	`purged` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `audit_events` ADD `chain` text DEFAULT '' NOT NULL;