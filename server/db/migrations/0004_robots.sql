ALTER TABLE `jobs` ADD `environment` text DEFAULT 'prod' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `robot_compagnie` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `artifacts` text;--> statement-breakpoint
UPDATE `jobs` SET `robot_compagnie` = `compagnie` WHERE `robot_compagnie` = '';
