CREATE TABLE `wallet_balances` (
	`cabinet_id` text PRIMARY KEY NOT NULL,
	`balance` integer NOT NULL,
	FOREIGN KEY (`cabinet_id`) REFERENCES `cabinets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `wallet_balances` (`cabinet_id`, `balance`) SELECT `cabinet_id`, SUM(`amount`) FROM `wallet_ledger` GROUP BY `cabinet_id`;
