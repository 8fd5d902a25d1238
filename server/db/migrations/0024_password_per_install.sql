PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_users` (
	`id` text PRIMARY KEY NOT NULL,
	`cabinet_id` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	`disabled_at` integer,
	`must_change_password` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_users`("id", "cabinet_id", "email", "password_hash", "role", "created_at", "disabled_at", "must_change_password") SELECT "id", "cabinet_id", "email", "password_hash", "role", "created_at", "disabled_at", "must_change_password" FROM `users`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `users_cabinet_email_unique` ON `users` (`cabinet_id`,`email`);--> statement-breakpoint
CREATE INDEX `users_email_idx` ON `users` (`email`);