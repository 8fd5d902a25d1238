ALTER TABLE `jobs` ADD `enqueue_number` integer;--> statement-breakpoint
-- The jobs already here are numbered in the order they were created: which of them another
-- install pulled in is not recorded, so the hour after the upgrade counts them all, as before.
UPDATE `jobs` SET `enqueue_number` = (SELECT `n` FROM (SELECT `id`, row_number() OVER (PARTITION BY `cabinet_id` ORDER BY `created_at`, `id`) AS `n` FROM `jobs`) AS `numbered` WHERE `numbered`.`id` = `jobs`.`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_enqueue_number_idx` ON `jobs` (`cabinet_id`,`enqueue_number`);
