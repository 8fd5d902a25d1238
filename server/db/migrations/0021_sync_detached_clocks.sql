CREATE TABLE `sync_detached` (
	`cabinet_id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`clock_time` integer NOT NULL,
	`clock_counter` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sync_own_devices` (
	`cabinet_id` text NOT NULL,
	`device_id` text NOT NULL,
	PRIMARY KEY(`cabinet_id`, `device_id`)
);
--> statement-breakpoint
INSERT INTO `sync_own_devices` (`cabinet_id`, `device_id`) SELECT `cabinet_id`, `device_id` FROM `sync_connections`;
