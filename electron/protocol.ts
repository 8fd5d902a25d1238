import { z } from 'zod';
import { JOB_STATUSES, MFA_KINDS } from '../shared/automation.js';

/**
 * Messages between the Electron main process and the server's utility process (its parentPort).
 * Both sides validate what they receive: a bug on one side is a logged message, not a crash.
 */

const activeJobSchema = z.object({
  job_id: z.string(),
  cabinet_id: z.string(),
  status: z.enum(JOB_STATUSES),
  compagnie: z.string(),
  produit: z.string(),
  progress_percent: z.number(),
  mfa_challenge: z.string().nullable(),
  /** What the job waits for a person to do, while it waits. */
  mfa_kind: z.enum(MFA_KINDS).nullable(),
});
export type ActiveJob = z.infer<typeof activeJobSchema>;

const serverStatusSchema = z.object({
  robots_enabled: z.boolean(),
  kill_switch_reason: z.string().nullable(),
  jobs: z.array(activeJobSchema),
});
export type ServerStatus = z.infer<typeof serverStatusSchema>;

/** From the utility process to the main process. */
export const childMessageSchema = z.discriminatedUnion('type', [
  /** Listening: the console is at http://127.0.0.1:<port>/console/. */
  z.object({
    type: z.literal('listening'),
    port: z.number().int().min(1).max(65535),
    host: z.string(),
    secret_store: z.enum(['keychain', 'encrypted-file']),
    secret_store_warning: z.string().nullable(),
  }),
  /** Jobs and the kill switch, sent every couple of seconds while running. */
  z.object({ type: z.literal('status'), status: serverStatusSchema }),
  /** The start failed (the reason is in words); the process exits right after. */
  z.object({ type: z.literal('fatal'), message: z.string() }),
  /** Answer to a request of the main process (`request_id`), ok or not. */
  z.object({ type: z.literal('reply'), request_id: z.string(), ok: z.boolean(), error: z.string().optional() }),
]);
export type ChildMessage = z.infer<typeof childMessageSchema>;

/** From the main process to the utility process. */
export const parentMessageSchema = z.discriminatedUnion('type', [
  /** Accept this one-time desktop sign-in token (its SHA-256) for two minutes. */
  z.object({ type: z.literal('allow-login'), request_id: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  /** The kill switch: pause (with a reason) or resume the robots. */
  z.object({ type: z.literal('set-robots'), request_id: z.string(), enabled: z.boolean(), reason: z.string().max(500).optional() }),
  /** Stop cleanly: finish in-flight requests, stop the worker, close the database, exit 0. */
  z.object({ type: z.literal('stop') }),
]);
export type ParentMessage = z.infer<typeof parentMessageSchema>;
