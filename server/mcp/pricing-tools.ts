import { z } from 'zod';
import {
  cancelJob,
  jobStatusSchema,
  mfaAnswerSchema,
  tarificationRequestBody,
  TERMINAL_STATUSES,
  type MfaAnswer,
} from '../../shared/automation.js';
import { ApiError } from '../errors.js';
import { codeSchema } from '../../shared/devis.js';
import * as catalogue from '../automation/catalogue.js';
import * as jobs from '../automation/jobs.js';
import * as automation from '../automation/service.js';
import * as jobControls from '../automation/job-controls.js';
import { defineTool, listed, NO_ARGUMENTS, READ } from './tool-definition.js';
import { comparisonRequestBody, createComparison as createComparisonEndpoint } from '../../shared/comparaisons.js';
import * as comparaisons from '../comparaisons/service.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';

const jobId = cancelJob.params.shape.job_id.describe('The job id returned by price_quote.');

/** The one answer a tool call gives, as the REST body; none or several is an answer that fits no step. */
function oneAnswer(given: { code?: string | undefined; approved?: true | undefined; answer?: string | undefined }): MfaAnswer {
  const parsed = mfaAnswerSchema.safeParse(Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)));
  if (!parsed.success)
    throw new ApiError('mfa_answer_mismatch', 'Give exactly one of code, approved or answer, as the job’s mfa.kind asks.');
  return parsed.data;
}

/** The products the robots price, and the data each needs. */
export const PRODUCT_TOOLS = [
  defineTool({
    name: 'list_products',
    title: 'List insurance products',
    description:
      'Returns the products that can be priced by the robots ({data: [{code, label, kind, cost_credits, insurers: [{code, name}]}]}): ' +
      'kind quote prices a contract, kind routine fetches a document. cost_credits is what one real run spends. ' +
      'Use it first to find the produit and compagnie codes that get_product_schema and price_quote need.',
    input: NO_ARGUMENTS,
    annotations: { ...READ, title: 'List insurance products' },
    scope: 'automation:read',
    returns: 'product_list',
    run: ({ deps }) => catalogue.listProducts(deps),
  }),
  defineTool({
    name: 'get_product_schema',
    title: 'Get the data a product needs',
    description:
      'Returns what dicData a product needs at an insurer: json_schema (JSON Schema of dicData), required (field names), ' +
      'labels (each field in words, in French) and example (a dicData that passes). produit and compagnie are codes from list_products. ' +
      'Use it before price_quote or create_devis to build a valid dicData; ask the user for any required field you do not know.',
    input: z.strictObject({
      produit: codeSchema.describe('Product code, from list_products (e.g. auto).'),
      compagnie: codeSchema.describe('Insurer code, from the product’s insurers in list_products (e.g. sandbox).'),
    }),
    annotations: { ...READ, title: 'Get the data a product needs' },
    scope: 'automation:read',
    returns: 'product_schema',
    run: ({ deps }, { produit, compagnie }) => catalogue.productSchemaDocument(deps, produit, compagnie),
  }),
];

/** A pricing job: started, read, cancelled. */
export const JOB_TOOLS = [
  defineTool({
    name: 'price_quote',
    title: 'Price a quote at an insurer',
    description:
      'Prices a product at an insurer with a robot on the insurer’s portal. compagnie and produit are codes from list_products; ' +
      'dicData must follow get_product_schema. With dry_run: true it only checks the request (missing fields, quota, credentials, cost) ' +
      'and spends nothing: do that first. Without dry_run it starts a job that spends Robot credits (cost_credits of the product) and returns ' +
      `{job_id, status: pending}; follow it with get_job until its status is final: ${listed(TERMINAL_STATUSES)} (usually a few seconds to a minute). ` +
      'Pass devis_id to price a draft from create_devis, or client_id to link the new quote to a client.',
    input: tarificationRequestBody.omit({ callback_webhook_id: true }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      title: 'Price a quote at an insurer',
    },
    scope: 'automation:enqueue',
    idempotent: true,
    returns: 'tarification',
    run: ({ deps, access }, request) => {
      if (request.dry_run === true) return automation.dryRunTarification(deps, access.cabinetId, request, 'prod');
      return automation.enqueueTarification(deps, access.cabinetId, request, 'prod');
    },
  }),
  defineTool({
    name: 'get_job',
    title: 'Get a pricing job',
    description:
      `Returns a pricing job started by price_quote (job_id): status (${listed(jobStatusSchema.options)}), ` +
      'progress {step, percent}, result {tarif_eur, suspens} once priced, error {code, message} on failure, credits_consumed, and devis_id, the quote it prices ' +
      '(read it with get_devis). While mfa_required or awaiting_mfa, the robot waits for a person: mfa.kind says for what — otp (a code sent by mfa.channel: sms, email or app), ' +
      'app_approval (the user approves in the insurer’s app), captcha (an image the user reads in the Courtier console), question (mfa.challenge asks, mfa.choices lists the answers): ' +
      'ask the user, then answer with answer_job_step.',
    input: z.strictObject({ job_id: jobId }),
    annotations: { ...READ, title: 'Get a pricing job' },
    scope: 'automation:read',
    returns: 'job',
    run: ({ deps, access }, { job_id }) => jobs.getJob(deps, access.cabinetId, job_id),
  }),
  defineTool({
    name: 'answer_job_step',
    title: 'Answer what a pricing job asks a person',
    description:
      'Gives a job waiting for a person (get_job: mfa set) what the user answered, and the robot goes on: code for mfa.kind otp (the code the user received) ' +
      'or captcha (the text the user read in the Courtier console), approved: true for app_approval once the user says they approved it in the insurer’s app, ' +
      'answer for question (one of mfa.choices’ values when it has choices, else the user’s text). Never invent an answer: ask the user. Returns the job; ' +
      'an answer that does not fit gives mfa_answer_mismatch (the job keeps waiting), a job no longer waiting job_not_awaiting_mfa.',
    input: z.strictObject({
      job_id: jobId,
      code: z.string().optional().describe('otp: the code; captcha: the image’s text.'),
      approved: z.literal(true).optional().describe('app_approval: true once the user approved in the insurer’s app.'),
      answer: z.string().optional().describe('question: the chosen value, or the text.'),
    }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      title: 'Answer a pricing job’s step',
    },
    scope: 'automation:enqueue',
    returns: 'job',
    run: ({ deps, worker, access }, { job_id, ...given }) =>
      jobControls.giveMfaCode(deps, worker, access.cabinetId, job_id, oneAnswer(given)),
  }),
  defineTool({
    name: 'cancel_job',
    title: 'Cancel a pricing job',
    description:
      'Cancels a pricing job (job_id from price_quote) that has not finished: a running robot is stopped and the credits are refunded. ' +
      'Returns the job, now cancelled; a job already cancelled is returned as is; a finished job gives the error job_not_cancellable, ' +
      'and one started on another computer of the cabinet job_runs_elsewhere (only that computer cancels it).',
    input: z.strictObject({ job_id: jobId }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false, title: 'Cancel a pricing job' },
    scope: 'automation:enqueue',
    returns: 'job',
    run: ({ deps, worker, access }, { job_id }) => jobControls.cancelJobAndRobot(deps, worker, access.cabinetId, job_id),
  }),
];

const comparisonId = z.uuid().describe('The comparaison_id compare_quotes returned.');
const comparisonFields = createComparisonEndpoint.body.options[0].shape;

/** One risk priced at several insurers, and its offers. */
export const COMPARISON_TOOLS = [
  defineTool({
    name: 'get_risk_schema',
    title: 'Get the common risk model of a line',
    description:
      'Returns the common risk model of a line of business (ligne: auto for a car, mrh for a home): json_schema (the risk, in groups, ' +
      'each field labelled in French in title and in English in x-title-en), example (a risk that passes), garanties (the guarantee codes offers use) ' +
      'and compagnies (the insurers that price the line from it). Use it before compare_quotes; ask the user for what you do not know.',
    input: z.strictObject({ ligne: z.enum(['auto', 'mrh']).describe('auto (car) or mrh (home).') }),
    annotations: { ...READ, title: 'Get the common risk model of a line' },
    scope: 'automation:read',
    returns: 'risk_schema',
    run: ({ deps }, { ligne }) => comparaisons.riskSchemaDocument(deps, ligne),
  }),
  defineTool({
    name: 'compare_quotes',
    title: 'Compare insurers for one risk',
    description:
      'Prices one risk (a car or a home, in the common model of get_risk_schema) at several insurers at once, a robot each. ' +
      'By default every insurer that prices the line and has a login in the cabinet; compagnies names some. With dry_run: true it spends nothing ' +
      'and says, per insurer, whether it would run, its cost and the questions of its own still open (missing_answers): ask the user, then pass ' +
      'the answers in reponses ({compagnie: {question code: value}}). Without dry_run it starts one job per insurer, spending each one’s credits, ' +
      'and returns {comparaison_id, jobs, ecartees (insurers left out, and why)}; follow it with get_comparison until its status is final ' +
      '(completed, partial or failed). Pass client_id to attach each quote to a client.',
    input: z.strictObject({
      ligne: comparisonFields.ligne.describe('auto (car) or mrh (home).'),
      risque: z.record(z.string(), z.unknown()).describe('The risk, following get_risk_schema’s json_schema for the line.'),
      client_id: comparisonFields.client_id,
      compagnies: comparisonFields.compagnies,
      reponses: comparisonFields.reponses,
      dry_run: comparisonFields.dry_run,
    }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      title: 'Compare insurers for one risk',
    },
    scope: 'automation:enqueue',
    idempotent: true,
    returns: 'comparison_started',
    run: ({ deps, access }, args) => {
      // The risk is checked against its line's model here, with each field's path, as the REST route does.
      const parsed = comparisonRequestBody.safeParse(args);
      if (!parsed.success) throw validationError(toValidationIssues(parsed.error, 'arguments', args));
      if (parsed.data.dry_run === true) return comparaisons.dryRunComparison(deps, access.cabinetId, parsed.data, 'prod');
      return comparaisons.createComparison(deps, access.cabinetId, parsed.data, 'prod');
    },
  }),
  defineTool({
    name: 'get_comparison',
    title: 'Get a comparison',
    description:
      'Returns a comparison started by compare_quotes: status (pending, running, completed, partial — some insurers gave no price — or failed) and, ' +
      'per insurer, its job status, tarif_eur, offres (each formula with its annual premium, deductible and guarantees under the line’s codes), ' +
      'devis_id (read it with get_devis) and the error when it failed. A job waiting for a person shows in get_job (job_id).',
    input: z.strictObject({ comparaison_id: comparisonId }),
    annotations: { ...READ, title: 'Get a comparison' },
    scope: 'automation:read',
    returns: 'comparison',
    run: ({ deps, access }, { comparaison_id }) => comparaisons.getComparison(deps, access.cabinetId, comparaison_id),
  }),
];
