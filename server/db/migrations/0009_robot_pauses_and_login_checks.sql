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
