import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/**
 * The console's jobs dashboard: over the last 7, 30 or 90 days, per insurer and per day, how many
 * jobs ran, how many priced, how long a priced run took, the credits they cost, and why the others
 * failed. Days are whole UTC days (the cabinet has no time zone of its own); the period ends with
 * today and a job counts on the day it was created. Test keys' jobs (run on a demo insurer) are left out.
 */

export const DASHBOARD_PERIODS = [7, 30, 90] as const;
export type DashboardPeriod = (typeof DASHBOARD_PERIODS)[number];

const dashboardQuery = z.object({
  days: z
    .enum(['7', '30', '90'], { error: 'days is 7, 30 or 90' })
    .default('7')
    .transform((days) => Number(days) as DashboardPeriod),
});

/** The counts shared by an insurer's line, a day's and the whole period's. */
const jobCountsSchema = z.object({
  jobs: z.int().describe('Jobs created in the period.'),
  succeeded: z.int().describe('Priced (completed, or partial: a price without the insurer’s PDF).'),
  failed: z.int(),
  cancelled: z.int(),
  open: z.int().describe('Still waiting or running now (queued, running, waiting for a code).'),
  success_rate: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe('succeeded / (succeeded + failed + cancelled), a fraction; null when none has finished.'),
  credits: z.int().describe('Credits debited for these jobs minus those refunded to date.'),
});
export type JobCounts = z.infer<typeof jobCountsSchema>;

const insurerLineSchema = jobCountsSchema.extend({
  compagnie: z.string(),
  name: z.string().describe('The insurer’s name (its code when it is no longer installed).'),
  median_seconds: z
    .number()
    .nullable()
    .describe('Median time of its priced jobs, from the robot’s start to the finish; null when none priced.'),
  p90_seconds: z.number().nullable().describe('90th percentile (nearest rank) of the same durations.'),
});

const dayLineSchema = jobCountsSchema.extend({ date: z.iso.date().describe('The UTC day.') });
export type DashboardDay = z.infer<typeof dayLineSchema>;

const failureReasonSchema = z.object({
  code: z.string().describe('The job’s error code (as in Job.error.code).'),
  count: z.int(),
  insurers: z.array(z.string()).describe('The codes of the insurers where it happened.'),
  last_job_id: z.uuid().describe('The latest job that failed so.'),
  last_at: z.iso.datetime(),
});

export const jobsDashboardSchema = z
  .object({
    days: z.int(),
    from: z.iso.date().describe('The first day of the period (UTC).'),
    to: z.iso.date().describe('The last day of the period: today (UTC).'),
    totals: jobCountsSchema.extend({
      median_seconds: z.number().nullable(),
      p90_seconds: z.number().nullable(),
    }),
    insurers: z.array(insurerLineSchema).describe('The insurers with jobs in the period, most jobs first.'),
    per_day: z.array(dayLineSchema).describe('Every day of the period, oldest first, zeros included.'),
    failures: z.array(failureReasonSchema).describe('Failed jobs by error code, most frequent first.'),
  })
  .meta({ id: 'JobsDashboard' });
export type JobsDashboard = z.infer<typeof jobsDashboardSchema>;

export const getJobsDashboard = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/automation/dashboard',
  operationId: 'consoleGetJobsDashboard',
  summary: 'The jobs dashboard: success rate, duration and credits per insurer and per day, failures by reason',
  tag: 'Console: automation',
  auth: 'console',
  query: dashboardQuery,
  responses: { 200: { description: 'The period’s figures.', schema: jobsDashboardSchema } },
  errors: [],
});
