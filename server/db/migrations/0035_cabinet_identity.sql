ALTER TABLE `cabinets` ADD `orias` text;--> statement-breakpoint
ALTER TABLE `cabinets` ADD `address` text;