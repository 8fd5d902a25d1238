CREATE TABLE `insurer_login_tests` (
	`cabinet_id` text NOT NULL,
	`compagnie` text NOT NULL,
	`ok` integer NOT NULL,
	`mfa_required` integer NOT NULL,
	`code` text,
	`message` text,
	`tested_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `compagnie`),
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `job_steps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`cabinet_id` text NOT NULL,
	`job_id` text NOT NULL,
	`status` text NOT NULL,
	`step` text NOT NULL,
	`percent` integer NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `job_steps_job_idx` ON `job_steps` (`cabinet_id`,`job_id`,`id`);