ALTER TABLE `users` ADD `removed_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `held_role` text;--> statement-breakpoint
ALTER TABLE `users` ADD `held_disabled_at` integer;