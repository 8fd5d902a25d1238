import type { ProductSchemaDocument } from '../../shared/products.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { toValidationIssues } from '../platform/http/validation.js';
import { productJsonSchema, type ProductDefinition } from '@courtier/adapter-kit';
import type { Insurer } from '../insurers/registry.js';

export function costOf(deps: Pick<Deps, 'config'>, product: ProductDefinition): number {
  return product.kind === 'quote' ? deps.config.creditsPerQuote : deps.config.creditsPerRoutine;
}

/** The adapter and product for a request, or the 404 that says which of the two is unknown. */
export function findProduct(
  deps: Pick<Deps, 'insurers'>,
  produit: string,
  compagnie: string,
): { adapter: Insurer; product: ProductDefinition } {
  const offering = deps.insurers.list().filter((a) => a.products.some((p) => p.code === produit));
  if (offering.length === 0) throw new ApiError('unknown_product', `No product ${produit}. See GET /api/v1/public/produits-disponibles.`);
  const adapter = deps.insurers.get(compagnie);
  const product = adapter?.products.find((p) => p.code === produit);
  if (!adapter || !product) {
    throw new ApiError(
      'unknown_insurer',
      `${adapter ? `${adapter.name} does not offer` : `No insurer ${compagnie} offers`} ${produit}; offered by: ${offering.map((a) => a.code).join(', ')}.`,
    );
  }
  return { adapter, product };
}

export function listProducts(deps: Pick<Deps, 'insurers' | 'config'>) {
  const byCode = new Map<
    string,
    { code: string; label: string; kind: ProductDefinition['kind']; cost_credits: number; insurers: { code: string; name: string }[] }
  >();
  for (const adapter of deps.insurers.list()) {
    for (const product of adapter.products) {
      const entry = byCode.get(product.code) ?? {
        code: product.code,
        label: product.label,
        kind: product.kind,
        cost_credits: costOf(deps, product),
        insurers: [],
      };
      entry.insurers.push({ code: adapter.code, name: adapter.name });
      byCode.set(product.code, entry);
    }
  }
  return { data: [...byCode.values()] };
}

const requiredOf = (jsonSchema: Record<string, unknown>): string[] => (jsonSchema.required ?? []) as string[];

export function productSchemaDocument(deps: Pick<Deps, 'insurers' | 'config'>, produit: string, compagnie: string): ProductSchemaDocument {
  const { product } = findProduct(deps, produit, compagnie);
  const jsonSchema = productJsonSchema(product.schema);
  const properties = (jsonSchema.properties ?? {}) as Record<
    string,
    { description?: string; title?: string; 'x-enum-labels'?: Record<string, string> }
  >;
  return {
    produit: product.code,
    compagnie,
    label: product.label,
    kind: product.kind,
    cost_credits: costOf(deps, product),
    json_schema: jsonSchema,
    required: requiredOf(jsonSchema),
    labels: Object.fromEntries(Object.entries(properties).map(([key, p]) => [key, p.title ?? p.description ?? key])),
    enum_labels: Object.fromEntries(
      Object.entries(properties).flatMap(([key, p]) => (p['x-enum-labels'] ? [[key, p['x-enum-labels']]] : [])),
    ),
    example: product.example,
  };
}

/**
 * Validates dicData against the product: the fields missing, and every other problem. A field is
 * missing when the schema document lists it in `required` and dicData does not have it, whatever
 * zod's issue for it says (a missing choice is `invalid_value`, a missing text `invalid_type`).
 */
export function checkDicData(product: ProductDefinition, dicData: Record<string, unknown>) {
  const result = product.schema.safeParse(dicData);
  if (result.success) return { ok: true as const, data: result.data as Record<string, unknown>, missing: [] as string[], issues: [] };
  const issues = toValidationIssues(result.error, 'body.dicData', dicData);
  const missing = requiredOf(productJsonSchema(product.schema)).filter((field) => dicData[field] === undefined);
  return { ok: false as const, data: undefined, missing, issues };
}
