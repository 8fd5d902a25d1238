CREATE TABLE `insurer_credentials` (
	`cabinet_id` text NOT NULL,
	`compagnie` text NOT NULL,
	`login` text NOT NULL,
	`extra` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `compagnie`),
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `wallet_ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`cabinet_id` text NOT NULL,
	`kind` text NOT NULL,
	`amount` integer NOT NULL,
	`job_id` text,
	`note` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `wallet_ledger_cabinet_idx` ON `wallet_ledger` (`cabinet_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `wallet_ledger_job_once_idx` ON `wallet_ledger` (`job_id`,`kind`) WHERE job_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `automation_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `insurer_breakers` (
	`compagnie` text PRIMARY KEY NOT NULL,
	`consecutive_failures` integer NOT NULL,
	`open_until` integer,
	`trial_job_id` text
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`compagnie` text NOT NULL,
	`produit` text NOT NULL,
	`dic_data` text NOT NULL,
	`request_hash` text NOT NULL,
	`devis_id` text NOT NULL,
	`status` text NOT NULL,
	`progress_step` text NOT NULL,
	`progress_percent` integer NOT NULL,
	`cost_credits` integer NOT NULL,
	`result_tarif_cents` integer,
	`result_suspens` text,
	`error_code` text,
	`error_message` text,
	`error_technical` integer,
	`submitted` integer NOT NULL,
	`attempts` integer NOT NULL,
	`lease_until` integer,
	`mfa_challenge` text,
	`mfa_requested_at` integer,
	`mfa_expires_at` integer,
	`callback_webhook_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `jobs_page_idx` ON `jobs` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_status_page_idx` ON `jobs` (`cabinet_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_queue_idx` ON `jobs` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_replay_idx` ON `jobs` (`cabinet_id`,`request_hash`,`created_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_devis` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`status` text NOT NULL,
	`client_id` text,
	`opportunity_id` text,
	`compagnie` text NOT NULL,
	`produit` text NOT NULL,
	`dic_data` text NOT NULL,
	`tarif_cents` integer,
	`suspens` text,
	`job_id` text,
	`pdf_sha256` text,
	`contract_id` text,
	`signed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_devis`("id", "cabinet_id", "status", "client_id", "opportunity_id", "compagnie", "produit", "dic_data", "tarif_cents", "suspens", "job_id", "pdf_sha256", "contract_id", "signed_at", "created_at", "updated_at") SELECT "id", "cabinet_id", "status", "client_id", "opportunity_id", "compagnie", "produit", "dic_data", "tarif_cents", "suspens", "job_id", "pdf_sha256", "contract_id", "signed_at", "created_at", "updated_at" FROM `devis`;--> statement-breakpoint
DROP TABLE `devis`;--> statement-breakpoint
ALTER TABLE `__new_devis` RENAME TO `devis`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `devis_page_idx` ON `devis` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `devis_status_page_idx` ON `devis` (`cabinet_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `devis_client_idx` ON `devis` (`cabinet_id`,`client_id`);