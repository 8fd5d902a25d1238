ALTER TABLE `jobs` ADD `timeline` text;--> statement-breakpoint
-- Each job's steps move into its row, oldest first; a job without steps here (pulled from another
-- install) keeps a null timeline.
UPDATE `jobs` SET `timeline` = (SELECT json_group_array(json_object('status', `s`.`status`, 'step', `s`.`step`, 'percent', `s`.`percent`, 'at', `s`.`at`) ORDER BY `s`.`id`) FROM `job_steps` AS `s` WHERE `s`.`cabinet_id` = `jobs`.`cabinet_id` AND `s`.`job_id` = `jobs`.`id`) WHERE EXISTS (SELECT 1 FROM `job_steps` AS `s` WHERE `s`.`cabinet_id` = `jobs`.`cabinet_id` AND `s`.`job_id` = `jobs`.`id`);--> statement-breakpoint
DROP TABLE `job_steps`;
