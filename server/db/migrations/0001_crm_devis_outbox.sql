CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`cabinet_id` text NOT NULL,
	`type` text NOT NULL,
	`version` text NOT NULL,
	`created_at` integer NOT NULL,
	`data` text NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id_unique` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_cabinet_seq_idx` ON `events` (`cabinet_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_created_idx` ON `events` (`created_at`);--> statement-breakpoint
CREATE TABLE `clients` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`type` text NOT NULL,
	`last_name` text,
	`first_name` text,
	`company_name` text,
	`siret` text,
	`email` text,
	`phone` text,
	`address` text,
	`birth_date` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `clients_page_idx` ON `clients` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `clients_type_page_idx` ON `clients` (`cabinet_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `opportunities` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`title` text NOT NULL,
	`product` text NOT NULL,
	`stage` text NOT NULL,
	`expected_value_cents` integer NOT NULL,
	`source` text NOT NULL,
	`contact` text NOT NULL,
	`tags` text NOT NULL,
	`created_via` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `opportunities_page_idx` ON `opportunities` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `opportunities_stage_page_idx` ON `opportunities` (`cabinet_id`,`stage`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `contracts` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`devis_id` text NOT NULL,
	`client_id` text NOT NULL,
	`opportunity_id` text,
	`compagnie` text NOT NULL,
	`produit` text NOT NULL,
	`premium_cents` integer NOT NULL,
	`signed_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`devis_id`) REFERENCES `devis`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contracts_devis_id_unique` ON `contracts` (`devis_id`);--> statement-breakpoint
CREATE TABLE `devis` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`status` text NOT NULL,
	`client_id` text NOT NULL,
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
CREATE INDEX `devis_page_idx` ON `devis` (`cabinet_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `devis_status_page_idx` ON `devis` (`cabinet_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `devis_client_idx` ON `devis` (`cabinet_id`,`client_id`);--> statement-breakpoint
CREATE TABLE `devis_documents` (
	`devis_id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`pdf` blob NOT NULL,
	`sha256` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`devis_id`) REFERENCES `devis`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`cabinet_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`status_code` integer,
	`response_body` text,
	`response_headers` text,
	`locked_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `endpoint`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires_idx` ON `idempotency_keys` (`expires_at`);