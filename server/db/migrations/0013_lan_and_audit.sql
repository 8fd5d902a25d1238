CREATE TABLE `lan_address_blocks` (
	`address` text PRIMARY KEY NOT NULL,
	`blocked_at` integer NOT NULL,
	`blocked_until` integer NOT NULL,
	`failures` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `lan_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`enabled` integer NOT NULL,
	`port` integer NOT NULL,
	`addresses` text,
	`names` text NOT NULL,
	`provided_certificate_file` text,
	`provided_key_file` text,
	`ca_certificate_pem` text,
	`ca_constraints` text,
	`server_certificate_pem` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text,
	`at` integer NOT NULL,
	`action` text NOT NULL,
	`result` text NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`actor_label` text,
	`address` text,
	`listener` text NOT NULL,
	`target` text,
	`details` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_cabinet_at_idx` ON `audit_events` (`cabinet_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_events_at_idx` ON `audit_events` (`at`);