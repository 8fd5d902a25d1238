import { z } from 'zod';
import { CLIENT_CONTACT_FIELDS, clientErasureSchema, clientSchema } from './crm.js';
import type { Scope } from './scopes.js';
import { MFA_KINDS } from './automation.js';

/** Part 6.4: every event type, the scope it relates to (informational), and when it fires. */
const EVENT_CATALOGUE = {
  'opportunity.created': { scope: 'crm:read', firesWhen: 'an opportunity is created' },
  'opportunity.stage_changed': { scope: 'crm:read', firesWhen: "an opportunity's stage changes" },
  'opportunity.won': { scope: 'crm:read', firesWhen: 'stage reaches won (in addition to stage_changed)' },
  'opportunity.lost': { scope: 'crm:read', firesWhen: 'stage reaches lost (in addition to stage_changed)' },
  'devis.generated': { scope: 'devis:read', firesWhen: 'a quote is successfully priced' },
  'devis.failed': { scope: 'devis:read', firesWhen: 'quote pricing failed' },
  'devis.signed': { scope: 'devis:read', firesWhen: 'a quote is signed' },
  'job.completed': { scope: 'automation:read', firesWhen: 'a tarification job completes' },
  'job.failed': { scope: 'automation:read', firesWhen: 'a tarification job fails' },
  'job.mfa_required': { scope: 'automation:read', firesWhen: 'a job is paused awaiting multi-factor authentication' },
  'insurer.portal_changed': {
    scope: 'automation:read',
    firesWhen: "a robot finds that a page of an insurer's portal is not the one its adapter expects (its job fails as portal_changed)",
  },
  'contract.signed': { scope: 'crm:read', firesWhen: 'a signed quote becomes a contract' },
  'comparaison.completed': {
    scope: 'automation:read',
    firesWhen: 'every insurer of a comparison has answered (its status is completed, partial or failed)',
  },
  // Additions to part 6.4: a client's changes and its erasure.
  'client.updated': { scope: 'crm:read', firesWhen: "a client's contact details change (PATCH /clients/{id}, the update_client tool)" },
  'client.erased': { scope: 'crm:read', firesWhen: "a client's personal data is erased (DELETE /clients/{id}, the erase_client tool)" },
  'webhook.test': { scope: null, firesWhen: 'manual test delivery; not covered by *' },
} as const satisfies Record<string, { scope: Scope | null; firesWhen: string }>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as [EventType, ...EventType[]];
const eventTypeSchema = z.enum(EVENT_TYPES);

/** Part 2.2: the opportunity.created payload, exactly. */
export const opportunityCreatedPayload = z.object({
  opportunity_id: z.uuid(),
  title: z.string(),
  stage: z.string(),
  expected_value_eur: z.number(),
  source: z.string(),
  contact: z.object({ last_name: z.string(), company_name: z.string().nullable(), siret: z.string().nullable() }),
  tags: z.array(z.string()),
  client_id: z.uuid().nullable(),
  created_via: z.string(),
});

export const opportunityStagePayload = z.object({
  opportunity_id: z.uuid(),
  title: z.string(),
  previous_stage: z.string(),
  stage: z.string(),
  expected_value_eur: z.number(),
  changed_at: z.iso.datetime(),
});

export const devisSignedPayload = z.object({
  devis_id: z.uuid(),
  client_id: z.uuid(),
  opportunity_id: z.uuid().nullable(),
  compagnie: z.string(),
  produit: z.string(),
  tarif_eur: z.number(),
  signed_at: z.iso.datetime(),
  contract_id: z.uuid(),
});

export const contractSignedPayload = z.object({
  contract_id: z.uuid(),
  devis_id: z.uuid(),
  client_id: z.uuid(),
  opportunity_id: z.uuid().nullable(),
  compagnie: z.string(),
  produit: z.string(),
  premium_eur: z.number().describe('Premium of the signed quote, in euros.'),
  signed_at: z.iso.datetime(),
});

/** The client after the change, as GET /clients/{id} answers it, and which of its fields changed. */
export const clientUpdatedPayload = clientSchema.extend({
  changed_fields: z
    .array(z.enum(CLIENT_CONTACT_FIELDS))
    .min(1)
    .describe('The contact fields whose value changed, in the order of the Client schema.'),
});

/** No personal data: which client was erased, and when. */
export const clientErasedPayload = clientErasureSchema;

const webhookTestPayload = z.object({ message: z.string(), webhook_id: z.uuid() });

const jobRef = {
  job_id: z.uuid(),
  compagnie: z.string(),
  produit: z.string(),
  devis_id: z.uuid(),
};

export const jobCompletedPayload = z.object({
  ...jobRef,
  status: z.enum(['completed', 'partial']).describe('partial: priced, but no PDF.'),
  tarif_eur: z.number(),
  suspens: z.string().nullable(),
  pdf_url: z.string().nullable(),
  credits_consumed: z.int(),
});

export const jobFailedPayload = z.object({
  ...jobRef,
  error: z.object({ code: z.string(), message: z.string(), technical: z.boolean() }),
  refunded: z.boolean(),
  credits_consumed: z.int(),
});

export const jobMfaRequiredPayload = z.object({ ...jobRef, kind: z.enum(MFA_KINDS), challenge: z.string(), expires_at: z.iso.datetime() });

/** No personal data: which insurer's portal changed, at which robot step, and the job that found it. */
const insurerPortalChangedPayload = z.object({
  compagnie: z.string().describe('The insurer whose robot ran the job (the job’s ran_on).'),
  produit: z.string(),
  step: z.string().describe('The robot step whose page was not the one its adapter expects.'),
  job_id: z.uuid(),
});

/** No personal data: the comparison, and per insurer its job's outcome and price. */
const comparisonCompletedPayload = z.object({
  comparaison_id: z.uuid(),
  ligne: z.enum(['auto', 'mrh']),
  client_id: z.uuid().nullable(),
  status: z.enum(['completed', 'partial', 'failed']),
  resultats: z.array(
    z.object({ compagnie: z.string(), job_id: z.uuid(), status: z.string(), tarif_eur: z.number().nullable(), devis_id: z.uuid() }),
  ),
});

const devisGeneratedPayload = z.object({
  devis_id: z.uuid(),
  job_id: z.uuid(),
  client_id: z.uuid().nullable(),
  compagnie: z.string(),
  produit: z.string(),
  tarif_eur: z.number(),
  pdf_url: z.string().nullable(),
});

const devisFailedPayload = z.object({
  devis_id: z.uuid(),
  job_id: z.uuid(),
  client_id: z.uuid().nullable(),
  compagnie: z.string(),
  produit: z.string(),
  reason: z.string(),
});

/**
 * The payload schema of every event type. recordEvent validates against these, so an event can
 * never drift from its schema; shared/masking.ts lists the personal data of each.
 */
export const EVENT_PAYLOADS = {
  'opportunity.created': opportunityCreatedPayload,
  'opportunity.stage_changed': opportunityStagePayload,
  'opportunity.won': opportunityStagePayload,
  'opportunity.lost': opportunityStagePayload,
  'devis.signed': devisSignedPayload,
  'contract.signed': contractSignedPayload,
  'client.updated': clientUpdatedPayload,
  'client.erased': clientErasedPayload,
  'webhook.test': webhookTestPayload,
  'job.completed': jobCompletedPayload,
  'job.failed': jobFailedPayload,
  'job.mfa_required': jobMfaRequiredPayload,
  'insurer.portal_changed': insurerPortalChangedPayload,
  'devis.generated': devisGeneratedPayload,
  'devis.failed': devisFailedPayload,
  'comparaison.completed': comparisonCompletedPayload,
} satisfies Record<EventType, z.ZodType>;

export type EventWithPayload = keyof typeof EVENT_PAYLOADS;
export type EventPayload<T extends EventWithPayload> = z.input<(typeof EVENT_PAYLOADS)[T]>;

/** Part 6.1: the envelope of every delivery. */
export const eventEnvelopeSchema = z
  .object({
    id: z.uuid().describe('Event id; receivers deduplicate on it.'),
    type: eventTypeSchema,
    version: z.literal('v1'),
    created_at: z.iso.datetime(),
    cabinet_id: z.uuid(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EventEnvelope' });
export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;
