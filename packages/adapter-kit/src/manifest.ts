import { z } from 'zod';
import { RISK_LINES, type RiskLine } from './risks.js';

/**
 * The version of the adapter API this kit is. A package names the range it works with in
 * `engines["courtier-adapter-api"]`; Courtier refuses a package whose range this version does not
 * satisfy. A major version breaks adapters (a member removed or changed); a minor one adds.
 */
export const ADAPTER_API_VERSION = '1.4.0';

/** The npm keyword that marks a package as a Courtier insurer adapter. */
export const ADAPTER_KEYWORD = 'courtier-insurer';

/** The kinds of help a robot may ask a person for mid-run. */
export const HUMAN_STEP_KINDS = ['otp_sms', 'otp_email', 'otp_app', 'app_approval', 'captcha', 'question'] as const;

/** An insurer's code: the `compagnie` of API requests. */
export const insurerCodeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{1,31}$/, 'lowercase letters, digits and dashes, 2 to 32, starting with a letter');

const label = z.string().trim().min(1).max(120);

/** A credential field beyond the login and the password (a broker code, a second identifier). */
const extraCredentialSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'snake_case, up to 32 characters'),
  label,
  /** A secret field is stored encrypted, typed by reference and kept out of traces like the password. */
  secret: z.boolean(),
});

/** An origin the adapter's browser may load: scheme, host and port, nothing else. */
const originSchema = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}, 'an origin such as https://extranet.example.fr (no path, no trailing slash)');

const productSchema = z.strictObject({
  code: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'snake_case, up to 32 characters'),
  label,
  kind: z.enum(['quote', 'routine']),
  /** The dicData's JSON Schema, as the code's zod schema gives it (the loader compares them). */
  schema: z.record(z.string(), z.unknown()),
  /** A dicData that passes the schema. */
  example: z.record(z.string(), z.unknown()),
});

/** The `courtier` field of an adapter's package.json. */
export const insurerManifestSchema = z.strictObject({
  code: insurerCodeSchema,
  name: z.string().trim().min(1).max(80),
  products: z.array(productSchema).min(1).max(64),
  /** The labels of the login and password fields, and the extra credential fields the portal needs. */
  credentials: z.strictObject({
    login: label,
    password: label,
    extra: z.array(extraCredentialSchema).max(8).default([]),
  }),
  /** The lines of business priced from the common risk model, each with the product that prices it (the code's `risks` maps the same). */
  lines: z.partialRecord(z.enum(Object.keys(RISK_LINES) as [RiskLine, ...RiskLine[]]), z.string()).default({}),
  /** What the robot may ask a person for; asking for anything else fails the job. */
  humanSteps: z.array(z.enum(HUMAN_STEP_KINDS)).max(HUMAN_STEP_KINDS.length).default([]),
  /** The web origins the robot's browser may load; any other request is blocked and logged. */
  origins: z.array(originSchema).max(16).default([]),
  /**
   * A demo insurer whose portal Courtier serves itself under `path` while its sandbox is on
   * (demos, test keys): its browser may load that path of the service and nothing else.
   */
  sandbox: z
    .strictObject({
      path: z.string().regex(/^\/sandbox\/[a-z0-9-]+$/, 'like /sandbox/<code>'),
      /** The portal's public demo account (printed in the README): what test keys log in with. */
      demoCredentials: z.strictObject({ login: z.string().min(1), password: z.string().min(1) }),
    })
    .optional(),
});
export type InsurerManifest = z.output<typeof insurerManifestSchema>;

/** The package.json of an adapter: what npm knows, plus Courtier's manifest. */
export const adapterPackageSchema = z.object({
  name: z.string().min(1).max(214),
  version: z.string().min(1).max(64),
  /** The entry module, relative to the package: its default export is the adapter's factory. */
  main: z.string().min(1).max(200),
  keywords: z.array(z.string()).refine((k) => k.includes(ADAPTER_KEYWORD), `must include "${ADAPTER_KEYWORD}"`),
  engines: z.looseObject({ 'courtier-adapter-api': z.string().min(1).max(64) }),
  courtier: insurerManifestSchema,
});
export type AdapterPackage = z.output<typeof adapterPackageSchema>;

/**
 * A product's dicData as JSON Schema (draft 2020-12, what a request may send): what the manifest
 * lists and what integrators read from the schema endpoint.
 */
export function productJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const jsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete jsonSchema.$schema;
  return jsonSchema;
}
