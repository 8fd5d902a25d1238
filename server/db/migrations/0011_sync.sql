CREATE TABLE `sync_connections` (
	`cabinet_id` text PRIMARY KEY NOT NULL,
	`hub_url` text NOT NULL,
	`device_id` text NOT NULL,
	`device_name` text NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`next_number` integer NOT NULL,
	`acknowledged_number` integer NOT NULL,
	`pull_cursor` integer NOT NULL,
	`clock_time` integer NOT NULL,
	`clock_counter` integer NOT NULL,
	`remote_clock_time` integer DEFAULT 0 NOT NULL,
	`state` text NOT NULL,
	`last_error` text,
	`last_error_code` text,
	`last_error_at` integer,
	`offline_since` integer,
	`hub_clock_offset` integer,
	`last_push_at` integer,
	`last_pull_at` integer,
	`connected_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sync_field_clocks` (
	`cabinet_id` text NOT NULL,
	`kind` text NOT NULL,
	`record_id` text NOT NULL,
	`clocks` text NOT NULL,
	`erased` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`cabinet_id`, `kind`, `record_id`)
);
--> statement-breakpoint
CREATE TABLE `sync_outbox` (
	`cabinet_id` text NOT NULL,
	`number` integer NOT NULL,
	`kind` text NOT NULL,
	`record_id` text NOT NULL,
	`op` text NOT NULL,
	`hlc` text NOT NULL,
	`fields` text NOT NULL,
	PRIMARY KEY(`cabinet_id`, `number`)
);
--> statement-breakpoint
CREATE INDEX `devis_documents_sha_idx` ON `devis_documents` (`cabinet_id`,`sha256`);