CREATE TABLE `devis_attachments` (
	`devis_id` text NOT NULL,
	`position` integer NOT NULL,
	`cabinet_id` text NOT NULL,
	`pdf` blob NOT NULL,
	`sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`devis_id`, `position`),
	FOREIGN KEY (`devis_id`) REFERENCES `devis`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `devis_attachments_sha_idx` ON `devis_attachments` (`cabinet_id`,`sha256`);--> statement-breakpoint
ALTER TABLE `devis` ADD `offres` text;--> statement-breakpoint
ALTER TABLE `devis` ADD `documents` text;