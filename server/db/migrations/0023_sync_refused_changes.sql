CREATE TABLE `sync_refused` (
	`cabinet_id` text NOT NULL,
	`hlc` text NOT NULL,
	`kind` text NOT NULL,
	`record_id` text NOT NULL,
	`op` text NOT NULL,
	`fields` text NOT NULL,
	`code` text NOT NULL,
	`message` text NOT NULL,
	`refused_at` integer NOT NULL,
	PRIMARY KEY(`cabinet_id`, `hlc`)
);
