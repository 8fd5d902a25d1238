CREATE TABLE `sync_conflicts` (
	`cabinet_id` text NOT NULL,
	`seq` integer NOT NULL,
	`device_id` text NOT NULL,
	`kind` text NOT NULL,
	`record_id` text NOT NULL,
	`op` text NOT NULL,
	`hlc` text NOT NULL,
	`fields` text NOT NULL,
	`reason` text NOT NULL,
	`message` text NOT NULL,
	`set_aside_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `sync_staged_blobs` (
	`cabinet_id` text NOT NULL,
	`sha256` text NOT NULL,
	`bytes` blob NOT NULL,
	`staged_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `sha256`)
);
--> statement-breakpoint
CREATE TABLE `audit_chain_start` (
	`id` integer PRIMARY KEY NOT NULL,
	`chain` text NOT NULL,
	`purged_at` integer,
	`purged` integer DEFAULT 0 NOT NULL,
	`seal` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `audit_events` ADD `chain` text DEFAULT '' NOT NULL;