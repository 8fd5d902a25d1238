PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_conseils` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`comparaison_id` text NOT NULL,
	`client_id` text NOT NULL,
	`compagnie` text NOT NULL,
	`formule` text NOT NULL,
	`motif` text NOT NULL,
	`besoins` text NOT NULL,
	`pdf` blob,
	`pdf_sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`comparaison_id`) REFERENCES `comparaisons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_conseils`("id", "cabinet_id", "comparaison_id", "client_id", "compagnie", "formule", "motif", "besoins", "pdf", "pdf_sha256", "created_at") SELECT "id", "cabinet_id", "comparaison_id", "client_id", "compagnie", "formule", "motif", "besoins", "pdf", "pdf_sha256", "created_at" FROM `conseils`;--> statement-breakpoint
DROP TABLE `conseils`;--> statement-breakpoint
ALTER TABLE `__new_conseils` RENAME TO `conseils`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `conseils_cabinet_client` ON `conseils` (`cabinet_id`,`client_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `comparaisons` ADD `made_here` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Every comparison made before comparisons synced was made on this install.
UPDATE `comparaisons` SET `made_here` = 1;
