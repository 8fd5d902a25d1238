import type { Page } from 'playwright-core';
import type { z } from 'zod';
import type { HumanAnswer, HumanStep } from './human-step.js';
import type { PageCheck } from './page-check.js';
import type { RiskMappings } from './risks.js';

/** What a product does: a quote is priced (and paid in credits as one), a routine acts on a policy. */
export type ProductKind = 'quote' | 'routine';

/** One product an insurer's portal can price (kind quote) or act on (kind routine). */
export interface ProductDefinition {
  code: string;
  label: string;
  kind: ProductKind;
  /** The dicData this product needs at this insurer; the schema endpoint is generated from it. */
  schema: z.ZodObject;
  /** A dicData that passes the schema, shown to integrators. */
  example: Record<string, unknown>;
}

export interface InsurerCredentials {
  login: string;
  password: string;
  extra: Record<string, string>;
}

export interface RobotContext {
  jobId: string;
  /**
   * The cabinet's credentials for this insurer, password included, read from the secret store when
   * called: call it to log in, and only then (a resumed session needs no password). Throws a
   * RobotError insurer_credentials_missing (technical) when they were removed after the enqueue.
   */
  credentials(): InsurerCredentials;
  /**
   * A page in this job's own browser context (isolated cookies), opened on first use. The worker
   * closes the context after the run and, on a failure, saves a screenshot and a trace of it.
   * After a success, it keeps the context open for a while (SESSION_IDLE_MS): the next job of the
   * same login (cabinet, insurer, same credentials) gets that page back, where the last job left
   * it, still logged in unless the portal ended the session. So log in only when the portal asks.
   * Throws RobotError browser_unavailable (technical) when no browser is installed.
   */
  openPage(): Promise<Page>;
  /** Live progress, shown in GET /automation/jobs/{id} and the console. */
  progress(step: string, percent: number): void;
  /**
   * Asks a person for help mid-run and resolves with their answer: a one-time code (otp), true once
   * they say they approved in the insurer's app (app_approval), the text of a captcha, or the answer
   * to a question (one of the choices' values when it offers choices). Rejects with a RobotError
   * human_step_undeclared (technical) when the manifest's humanSteps does not declare the step's kind
   * (an otp's kind is otp_<channel>), human_step_invalid when it cannot be shown (empty prompt, an
   * image over 200 KB), mfa_timeout when nobody answers within 5 minutes, or cancelled.
   */
  askHuman<S extends HumanStep>(step: S): Promise<HumanAnswer<S>>;
  /**
   * False when nobody is there to answer (a job an integration enqueued, on a cabinet that asked
   * robots not to wait for a person then): askHuman then throws RobotError human_required
   * (technical, refunded) at once. Check it before what makes the portal send a code or push an
   * approval, so that no SMS reaches a phone nobody watches.
   */
  humanPresent: boolean;
  /** Asks a person for the code the portal sent by SMS: `askHuman({kind: 'otp', channel: 'sms', prompt: challenge})`. */
  requestMfa(challenge: string): Promise<string>;
  /**
   * Says the pricing was submitted to the insurer: from here, a crash fails the job instead of
   * retrying it (a retry could price twice at the insurer).
   */
  markSubmitted(): void;
  /** Aborted when the job is cancelled; stop at the next step and throw. */
  signal: AbortSignal;
  /**
   * Runs `work`, which types these secrets into the portal (the password, a one-time code, a
   * secret `extra` field) and submits them. The browser's trace is paused meanwhile and resumes
   * only once no field holds them, so no trace, screenshot or log of the job ever shows them.
   * Type every secret inside it. (The password is known as a secret anyway: a trace that holds it
   * is discarded, and the failure screenshot masks password fields.)
   */
  withSecrets<T>(secrets: readonly string[], work: () => Promise<T>): Promise<T>;
  /**
   * Told of each step whose page expectPage (given this context) found as expected. Set when the
   * run is recorded (the cassette keeps each step's snapshot) or replayed (the replay compares them);
   * absent in a job.
   */
  pageChecked?(check: PageCheck): void;
}

/** One guarantee of an offer, as the portal states it. */
export interface OfferGuarantee {
  /** The insurer's code for it (or a code the adapter makes from its label). */
  code: string;
  libelle: string;
  incluse: boolean;
  /** Its limit in euros, when the portal states one. */
  plafond_eur?: number | null;
}

/** One formula a portal offers for the risk (third party, comprehensive…), with its price and terms. */
export interface RobotOffer {
  /** The insurer's code for the formula. */
  formule: string;
  libelle: string;
  prime_annuelle_eur: number;
  prime_mensuelle_eur?: number | null;
  franchise_eur?: number | null;
  garanties: readonly OfferGuarantee[];
}

/** A document of the quote besides its main PDF: general conditions, the information document (IPID)… */
export interface RobotDocument {
  /** What it is: conditions (general or special conditions), information (the product information document), other. */
  kind: 'conditions' | 'information' | 'other';
  /** Its title as the portal gives it. */
  label: string;
  pdf: Buffer;
}

export interface RobotResult {
  /** The premium of the formula the quote is for (the dicData's, or the portal's default). */
  tarif_eur: number;
  suspens?: string;
  /** The quote's PDF. */
  pdf?: Buffer;
  /** Every formula the portal offered, when it shows several (the quote's is among them). */
  offres?: readonly RobotOffer[];
  /** The other PDFs the portal gives with the quote; at most 5, of 10 MB each. */
  documents?: readonly RobotDocument[];
  /** complete: priced with a PDF; partial: priced, but no PDF could be had. */
  outcome: 'complete' | 'partial';
}

/**
 * What a robot throws. technical: the portal or the machine failed (down, layout changed,
 * timeout, browser crash) — the debit is refunded and the insurer's circuit breaker counts it.
 * business: the insurer refused (risk declined, data refused) — the run was real, no refund.
 */
export class RobotError extends Error {
  override name = 'RobotError';
  constructor(
    readonly kind: 'technical' | 'business',
    readonly code: string,
    message: string,
    /** What a person or a program needs beyond the message (portal_changed: the step, what was expected and found). */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/**
 * What an adapter's code provides: its products and its robot. Its code, name, version and what it
 * may reach come from its package's manifest (the `courtier` field of its package.json), which
 * Courtier reads before it loads any code.
 */
export interface InsurerAdapter {
  /** The manifest lists the same products (code, label, kind, JSON Schema, example): the loader checks it. */
  products: readonly ProductDefinition[];
  run(ctx: RobotContext, input: { produit: string; dicData: Record<string, unknown> }): Promise<RobotResult>;
  /**
   * Optional: only the robot's login step, to check stored credentials (the console's "Test
   * login"). Resolves when the portal accepted them — mfa true when it now asks for a code, which
   * is not typed: the password is what is checked. Throws a RobotError otherwise
   * (invalid_credentials, insurer_unavailable, layout_changed…). ctx.askHuman is never called.
   */
  verifyLogin?(ctx: RobotContext): Promise<LoginCheck>;
  /**
   * Optional: the lines of business this insurer prices from the common risk model (a comparison
   * asks every insurer that maps the line), each with the product it prices and how the risk
   * becomes that product's dicData. The manifest's `lines` names the same products.
   */
  risks?: RiskMappings;
}

/** What a login check found. */
export interface LoginCheck {
  /** The portal asks for a code (SMS, app) after the password. */
  mfa: boolean;
}

/** What Courtier gives an adapter's factory when it loads the package. */
export interface InsurerHost {
  /**
   * The base URL of the demo portal Courtier serves for this insurer (no trailing slash), read at
   * each run: the port is known once the service listens. Only for a package whose manifest has a
   * `sandbox` section; it throws for any other.
   */
  sandboxUrl(): string;
}

/** The default export of an adapter package's entry module. */
export type InsurerFactory = (host: InsurerHost) => InsurerAdapter;

/** Declares an adapter package's entry: `export default defineInsurer((host) => ({ products, run }))`. */
export function defineInsurer(factory: InsurerFactory): InsurerFactory {
  return factory;
}
