import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import { JOB_STATUSES } from '../../shared/automation.js';
import { cabinets } from '../tenancy/schema.js';

export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    compagnie: text('compagnie').notNull(),
    produit: text('produit').notNull(),
    dicData: text('dic_data').notNull(),
    /** SHA-256 of the canonical compagnie/produit/dicData: the replay guard looks it up. */
    requestHash: text('request_hash').notNull(),
    devisId: text('devis_id').notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull(),
    progressStep: text('progress_step').notNull(),
    progressPercent: integer('progress_percent').notNull(),
    costCredits: integer('cost_credits').notNull(),
    /**
     * Debited minus refunded, written when the job finishes: another install of the cabinet shows
     * it for a job it pulled (its own wallet never saw that job). Null while the job runs.
     */
    creditsConsumed: integer('credits_consumed'),
    resultTarifCents: integer('result_tarif_cents'),
    resultSuspens: text('result_suspens'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    errorTechnical: integer('error_technical', { mode: 'boolean' }),
    /** For portal_changed: the robot step whose page was not the one its adapter expects. */
    errorStep: text('error_step'),
    /** The robot said it submitted the pricing: after a crash, fail rather than retry. */
    submitted: integer('submitted', { mode: 'boolean' }).notNull(),
    attempts: integer('attempts').notNull(),
    leaseUntil: integer('lease_until'),
    mfaChallenge: text('mfa_challenge'),
    mfaRequestedAt: integer('mfa_requested_at'),
    mfaExpiresAt: integer('mfa_expires_at'),
    /** What the person is asked for while the job waits (JSON: kind, channel, choices, the image's type; never the image). */
    mfaStep: text('mfa_step'),
    /** Enqueued by an integration (an API key): nobody may be there to answer its portal (the cabinet's unattended setting). */
    byIntegration: integer('by_integration', { mode: 'boolean' }).notNull().default(false),
    callbackWebhookId: text('callback_webhook_id'),
    /** The key's environment: a test key's jobs always run on the sandbox insurer. */
    environment: text('environment', { enum: API_KEY_ENVIRONMENTS }).notNull().default('prod'),
    /** The insurer whose robot runs the job (sandbox for test keys, else compagnie). */
    robotCompagnie: text('robot_compagnie').notNull().default(''),
    /**
     * The version of the adapter package whose robot took the job (its code is robotCompagnie),
     * written by the claim: a reload of the insurers may change it between the enqueue and the run.
     * Null until a robot has taken the job.
     */
    adapterVersion: text('adapter_version'),
    /** JSON {screenshot, trace}: file names saved beside the job after a failure. */
    artifacts: text('artifacts'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
    /**
     * 1, 2, 3… per cabinet in the order this install enqueued its jobs; null on a job pulled from
     * another install. The hourly quota is the newest number minus the first of the hour, two index
     * lookups, where counting the hour's jobs cost every enqueue a step per job.
     */
    enqueueNumber: integer('enqueue_number'),
    /**
     * The job's steps as this install saw them, oldest first: a JSON array of {status, step,
     * percent, at}, one per status or progress move, appended by the UPDATE that moves the job
     * (store.ts). Null on a job pulled from another install: sync carries its current state, not
     * its history. In the row rather than a table of steps: the row's page is written anyway, where
     * a step's row and its index entry cost every job three inserts and three more WAL pages.
     */
    timeline: text('timeline'),
  },
  (t) => [
    index('jobs_page_idx').on(t.cabinetId, t.createdAt, t.id),
    uniqueIndex('jobs_enqueue_number_idx').on(t.cabinetId, t.enqueueNumber),
    index('jobs_status_page_idx').on(t.cabinetId, t.status, t.createdAt, t.id),
    index('jobs_queue_idx').on(t.status, t.createdAt),
    index('jobs_replay_idx').on(t.cabinetId, t.requestHash, t.createdAt),
  ],
);

/** Per insurer: consecutive technical failures, and until when the breaker stays open. */
export const insurerBreakers = sqliteTable('insurer_breakers', {
  compagnie: text('compagnie').primaryKey(),
  consecutiveFailures: integer('consecutive_failures').notNull(),
  openUntil: integer('open_until'),
  /** While half-open: the one job let through to try the insurer again. */
  trialJobId: text('trial_job_id'),
});

/** Install-wide switches, e.g. the robots kill switch. */
export const automationSettings = sqliteTable('automation_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * A cabinet's own pause of its robots, set by its admins from the console: its queued jobs are not
 * started and its new tarifications are refused. The install-wide switch is in automation_settings.
 */
export const robotPauses = sqliteTable('robot_pauses', {
  cabinetId: text('cabinet_id')
    .primaryKey()
    .references(() => cabinets.id),
  reason: text('reason').notNull(),
  /** The admin who paused (a user id of this cabinet). */
  pausedBy: text('paused_by').notNull(),
  createdAt: integer('created_at').notNull(),
});

/**
 * A login check (the console's "Test login") running on an insurer login: no job is started on
 * that login meanwhile, since portals log out a session when the same account logs in twice. The
 * lease covers the check's timeout, so a crash never blocks a login for long.
 */
export const insurerLoginChecks = sqliteTable(
  'insurer_login_checks',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    robotCompagnie: text('robot_compagnie').notNull(),
    checkId: text('check_id').notNull(),
    leaseUntil: integer('lease_until').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.robotCompagnie] })],
);

/** The last "Test login" of a cabinet's insurer login: the console's insurer status shows it across reloads. */
export const insurerLoginTests = sqliteTable(
  'insurer_login_tests',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    compagnie: text('compagnie').notNull(),
    ok: integer('ok', { mode: 'boolean' }).notNull(),
    mfaRequired: integer('mfa_required', { mode: 'boolean' }).notNull(),
    code: text('code'),
    message: text('message'),
    testedAt: integer('tested_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.compagnie] })],
);
