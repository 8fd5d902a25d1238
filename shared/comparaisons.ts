import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/** The lines of business a comparison prices: one common risk model each (the adapter kit's). */
export const RISK_LINE_CODES = ['auto', 'mrh'] as const;
const riskLineSchema = z.enum(RISK_LINE_CODES).describe('Line of business: auto (car) or mrh (home).');

const labels = z.object({ fr: z.string(), en: z.string() });

export const riskSchemaDocument = z
  .object({
    ligne: riskLineSchema,
    label: labels,
    json_schema: z
      .record(z.string(), z.unknown())
      .describe(
        'JSON Schema (2020-12) of the risk, in groups; each field has its label in title (French) and x-title-en, each choice its words in x-enum-labels and x-enum-labels-en.',
      ),
    example: z.record(z.string(), z.unknown()).describe('A risk that passes validation.'),
    garanties: z
      .array(z.object({ code: z.string(), label: labels }))
      .describe('The guarantees of the line: the codes offers of every insurer use, so that they line up.'),
    compagnies: z
      .array(z.object({ compagnie: z.string(), name: z.string(), produit: z.string() }))
      .describe('The insurers that price the line from this risk, each with the product that prices it.'),
  })
  .meta({ id: 'RiskSchema' });
export type RiskSchemaDocument = z.infer<typeof riskSchemaDocument>;

export const getRiskSchema = defineEndpoint({
  method: 'GET',
  path: '/automation/risques/{ligne}/schema',
  operationId: 'getRiskSchema',
  summary: 'The common risk model of a line of business',
  description:
    'One risk, the same for every insurer: describe the client’s car or home once, and each insurer that prices the line maps it to its own product.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: z.object({ ligne: z.string().describe('auto or mrh.') }),
  responses: { 200: { description: 'The risk model.', schema: riskSchemaDocument } },
  errors: ['unknown_line'],
});
