import { z } from 'zod';
import { PRODUCT_KINDS } from './automation.js';
import { codeSchema } from './devis.js';
import { defineEndpoint } from './endpoint.js';

/** The products that can be priced, at which insurers, and the dicData each needs. */

export const productSchemaDocument = z
  .object({
    produit: z.string(),
    compagnie: z.string(),
    label: z.string(),
    kind: z.enum(PRODUCT_KINDS),
    cost_credits: z.int(),
    json_schema: z.record(z.string(), z.unknown()).describe('JSON Schema (2020-12) of dicData.'),
    required: z.array(z.string()),
    labels: z.record(z.string(), z.string()).describe('A label in words for each field.'),
    enum_labels: z
      .record(z.string(), z.record(z.string(), z.string()))
      .describe(
        'For each field that is a choice of codes, a label in words per value (field → value → label): show the label, send the value. The same labels are in json_schema, as x-enum-labels on the field.',
      ),
    example: z.record(z.string(), z.unknown()).describe('A dicData that passes validation.'),
  })
  .meta({ id: 'ProductSchema' });
export type ProductSchemaDocument = z.infer<typeof productSchemaDocument>;

export const productListSchema = z
  .object({
    data: z.array(
      z.object({
        code: z.string(),
        label: z.string(),
        kind: z.enum(PRODUCT_KINDS),
        cost_credits: z.int(),
        insurers: z.array(z.object({ code: z.string(), name: z.string() })),
      }),
    ),
  })
  .meta({ id: 'ProductList' });
export type ProductList = z.infer<typeof productListSchema>;

export const listProducts = defineEndpoint({
  method: 'GET',
  path: '/produits-disponibles',
  operationId: 'listProducts',
  summary: 'Products that can be priced, and the insurers offering each',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  responses: { 200: { description: 'The catalogue.', schema: productListSchema } },
  errors: [],
});

export const getProductSchema = defineEndpoint({
  method: 'GET',
  path: '/produits-disponibles/{code}/schema',
  operationId: 'getProductSchema',
  summary: 'The dicData a product needs at an insurer',
  description: 'JSON Schema generated from the insurer adapter, the list of required fields, a label for each field and an example.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: z.object({ code: codeSchema }),
  query: z.object({ compagnie: codeSchema.describe('Insurer code.') }),
  responses: { 200: { description: 'The schema.', schema: productSchemaDocument } },
  errors: ['unknown_product', 'unknown_insurer'],
});
