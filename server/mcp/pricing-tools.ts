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
