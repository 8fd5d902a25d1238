CREATE TABLE `comparaisons` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`ligne` text NOT NULL,
	`client_id` text,
	`risque` text NOT NULL,
	`jobs` text NOT NULL,
	`ecartees` text NOT NULL,
	`environment` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `comparaisons_cabinet_created` ON `comparaisons` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `comparaisons_cabinet_client` ON `comparaisons` (`cabinet_id`,`client_id`,`created_at`);