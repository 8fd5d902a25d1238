CREATE TABLE `opportunity_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`opportunity_id` text NOT NULL,
	`author` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `opportunity_notes_opportunity_idx` ON `opportunity_notes` (`cabinet_id`,`opportunity_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `opportunities` ADD `client_id` text;--> statement-breakpoint
CREATE INDEX `opportunities_client_idx` ON `opportunities` (`cabinet_id`,`client_id`);