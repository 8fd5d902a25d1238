ALTER TABLE `oauth_grants` ADD `last_used_at` integer;--> statement-breakpoint
CREATE INDEX `oauth_grants_user_idx` ON `oauth_grants` (`user_id`,`created_at`);