DROP INDEX `users_email_unique`;--> statement-breakpoint
DROP INDEX `users_cabinet_idx`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_cabinet_email_unique` ON `users` (`cabinet_id`,`email`);--> statement-breakpoint
CREATE INDEX `users_email_idx` ON `users` (`email`);