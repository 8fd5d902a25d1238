import type { Page } from 'playwright-core';
import type { z } from 'zod';
import type { ProductKind } from '../../shared/automation.js';

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
   * Asks a person for the code the portal sent; resolves with what they typed. Rejects with a
   * RobotError mfa_timeout when nobody answers within 5 minutes, or when the job is cancelled.
   */
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
}

export interface RobotResult {
  tarif_eur: number;
  suspens?: string;
  pdf?: Buffer;
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
  ) {
    super(message);
  }
}

export interface InsurerAdapter {
  code: string;
  name: string;
  products: readonly ProductDefinition[];
  run(ctx: RobotContext, input: { produit: string; dicData: Record<string, unknown> }): Promise<RobotResult>;
  /**
   * Optional: only the robot's login step, to check stored credentials (the console's "Test
   * login"). Resolves when the portal accepted them — mfa true when it now asks for a code, which
   * is not typed: the password is what is checked. Throws a RobotError otherwise
   * (invalid_credentials, insurer_unavailable, layout_changed…). ctx.requestMfa is never called.
   */
  verifyLogin?(ctx: RobotContext): Promise<LoginCheck>;
  /**
   * Optional: this insurer is a demo one that test keys price with, whatever compagnie they name
   * (integrators try everything without a real portal), logging in with this public demo account
   * when the cabinet set none. An install offers one such insurer at most.
   */
  testKeys?: { demoCredentials: InsurerCredentials };
}

/** What a login check found. */
interface LoginCheck {
  /** The portal asks for a code (SMS, app) after the password. */
  mfa: boolean;
}

/** The insurers this install can price with, by code. */
export interface InsurerRegistry {
  list(): readonly InsurerAdapter[];
  get(code: string): InsurerAdapter | undefined;
  /** The insurer test keys price with (testKeys), if this install offers one. */
  forTestKeys(): (InsurerAdapter & Required<Pick<InsurerAdapter, 'testKeys'>>) | undefined;
}

export function createInsurerRegistry(adapters: readonly InsurerAdapter[]): InsurerRegistry {
  const byCode = new Map(adapters.map((a) => [a.code, a]));
  const demos = adapters.filter((a): a is InsurerAdapter & Required<Pick<InsurerAdapter, 'testKeys'>> => a.testKeys !== undefined);
  if (demos.length > 1) throw new Error(`Only one insurer may price for test keys; ${demos.map((a) => a.code).join(' and ')} both do.`);
  return { list: () => adapters, get: (code) => byCode.get(code), forTestKeys: () => demos[0] };
}
