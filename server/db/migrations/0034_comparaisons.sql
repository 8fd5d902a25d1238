CREATE TABLE `comparaison_jobs` (
	`job_id` text PRIMARY KEY NOT NULL,
	`comparaison_id` text NOT NULL,
	`cabinet_id` text NOT NULL,
	FOREIGN KEY (`comparaison_id`) REFERENCES `comparaisons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `comparaison_jobs_comparaison` ON `comparaison_jobs` (`comparaison_id`);--> statement-breakpoint
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
	`completed_at` integer,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `comparaisons_cabinet_created` ON `comparaisons` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `comparaisons_cabinet_client` ON `comparaisons` (`cabinet_id`,`client_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `conseils` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`comparaison_id` text NOT NULL,
	`client_id` text NOT NULL,
	`compagnie` text NOT NULL,
	`formule` text NOT NULL,
	`motif` text NOT NULL,
	`besoins` text NOT NULL,
	`pdf` blob NOT NULL,
	`pdf_sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`comparaison_id`) REFERENCES `comparaisons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `conseils_cabinet_client` ON `conseils` (`cabinet_id`,`client_id`,`created_at`);