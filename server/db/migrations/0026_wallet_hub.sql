CREATE TABLE `wallet_hub_links` (
	`cabinet_id` text PRIMARY KEY NOT NULL,
	`linked` integer NOT NULL,
	`device_id` text NOT NULL,
	`hub_balance` integer NOT NULL,
	`cursor` integer NOT NULL,
	`heard_at` integer,
	`since_entry` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
DROP INDEX `wallet_ledger_job_once_idx`;--> statement-breakpoint
ALTER TABLE `wallet_ledger` ADD `entry_id` text;--> statement-breakpoint
ALTER TABLE `wallet_ledger` ADD `hub_state` text;--> statement-breakpoint
ALTER TABLE `wallet_ledger` ADD `hub_seq` integer;--> statement-breakpoint
ALTER TABLE `wallet_ledger` ADD `device_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `wallet_ledger_own_job_once_idx` ON `wallet_ledger` (`job_id`,`kind`) WHERE job_id IS NOT NULL AND hub_state IS NOT 'mirrored';--> statement-breakpoint
CREATE UNIQUE INDEX `wallet_ledger_entry_idx` ON `wallet_ledger` (`cabinet_id`,`entry_id`) WHERE entry_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `wallet_ledger_pending_idx` ON `wallet_ledger` (`cabinet_id`,`hub_state`) WHERE hub_state = 'pending';