CREATE TABLE `insurer_login_checks` (
	`cabinet_id` text NOT NULL,
	`robot_compagnie` text NOT NULL,
	`check_id` text NOT NULL,
	`lease_until` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `robot_compagnie`),
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `robot_pauses` (
	`cabinet_id` text PRIMARY KEY NOT NULL,
	`reason` text NOT NULL,
	`paused_by` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_idempotency_keys` (
	`cabinet_id` text NOT NULL,
	`caller` text NOT NULL,
	`endpoint` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`status_code` integer,
	`response_body` text,
	`response_headers` text,
	`owner` text,
	`locked_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `caller`, `endpoint`, `key`)
);
--> statement-breakpoint
-- Stored keys are not copied: they were scoped to the cabinet, not to the API key that sent them,
-- and a 24-hour cache may start empty.
--> statement-breakpoint
DROP TABLE `idempotency_keys`;--> statement-breakpoint
ALTER TABLE `__new_idempotency_keys` RENAME TO `idempotency_keys`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `idempotency_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
-- The install-wide kill switch could be set from any cabinet's console, with a reason naming the
-- admin; it now belongs to the operator alone and every cabinet sees its reason: keep it on, say why.
UPDATE `automation_settings` SET `value` = json_set(`value`, '$.reason', 'Robots were switched off before an upgrade of Courtier; the operator of this install switches them back on (courtier robots enable, or the desktop app''s tray).') WHERE `key` = 'robots_disabled';
