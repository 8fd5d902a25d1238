import { z } from 'zod';

/**
 * A cabinet's sync, as `courtier sync status` and the console show it. `state`: off (no hub),
 * idle (up to date), syncing (sending or receiving), offline (the hub cannot be reached; retried
 * with backoff), error (the hub refuses: last_error says why and what to do). A paused sync keeps
 * its link and queues changes; it reports its last state with paused true.
 */
export const SYNC_STATES = ['off', 'idle', 'syncing', 'offline', 'error'] as const;

const isoOrNull = z.iso.datetime().nullable();

export const syncStatusSchema = z
  .object({
    cabinet_id: z.string(),
    state: z.enum(SYNC_STATES),
    paused: z.boolean(),
    hub_url: z.string().nullable(),
    device_id: z.string().nullable(),
    device_name: z.string().nullable(),
    pending_changes: z.int().min(0).describe('Changes made here that the hub has not acknowledged yet.'),
    last_push_at: isoOrNull,
    last_pull_at: isoOrNull,
    last_error: z.string().nullable().describe('In words, e.g. "hub unreachable since 10:42" or "this device was revoked on the hub".'),
    last_error_code: z.string().nullable(),
    clock_ahead_seconds: z.int().nullable().describe('How far this machine’s clock is ahead of the hub’s (negative: behind), at the last answer.'),
  })
  .meta({ id: 'SyncStatus' });
export type SyncStatus = z.infer<typeof syncStatusSchema>;
