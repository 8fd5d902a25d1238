ALTER TABLE `cabinets` ADD `unattended_human_steps` text DEFAULT 'wait' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `by_integration` integer DEFAULT false NOT NULL;