import { z } from 'zod';
import { COMMON_ERRORS, endpointPath, type AuthKind, type Endpoint } from '../../shared/endpoint.js';
import { ERROR_DESCRIPTIONS, ERROR_STATUS, errorBodySchema, type ErrorCode } from '../../shared/errors.js';
import { MCP_SCOPES } from '../../shared/oauth.js';
import { SCOPES } from '../../shared/scopes.js';

type JsonSchema = Record<string, unknown>;

// A type, not an interface: it must fit the route's response schema, a record.
export type OpenApiDocument = {
  openapi: '3.1.0';
  info: Record<string, unknown>;
  servers: { url: string; description: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
  security: Record<string, string[]>[];
  'x-error-codes': Record<string, { status: number; description: string }>;
};

/** Paths that hang off the service's root, not off the document's server. */
const ROOT_SERVER = [{ url: '/', description: 'The root of this Courtier service' }];

/**
 * Converts one zod schema to JSON Schema 2020-12 (what OpenAPI 3.1 uses), moving named sub-schemas
 * (.meta({id})) into components. Input and output views of one id that differ get distinct names.
 */
function makeConverter(components: Record<string, JsonSchema>) {
  return (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      override: ({ jsonSchema }) => {
        // Regex noise that format already says; and the safe-integer bounds zod adds to every int.
        if (jsonSchema.format === 'date-time' || jsonSchema.format === 'email' || jsonSchema.format === 'uuid') delete jsonSchema.pattern;
        if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    }) as JsonSchema;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    const names = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      const existing = components[id];
      const name = existing === undefined || JSON.stringify(existing) === JSON.stringify(def) ? id : `${id}Input`;
      names.set(id, name);
    }
    const rewrite = (value: JsonSchema): JsonSchema =>
      JSON.parse(
        JSON.stringify(value).replace(/"#\/\$defs\/([^"]+)"/g, (_m, id: string) => `"#/components/schemas/${names.get(id) ?? id}"`),
      ) as JsonSchema;
    for (const [id, def] of Object.entries(defs)) components[names.get(id) ?? id] = rewrite(def);
    return rewrite(json);
  };
}

function parametersOf(convert: ReturnType<typeof makeConverter>, schema: z.ZodObject | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = convert(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function errorsOf(endpoint: Endpoint): ErrorCode[] {
  const codes = new Set<ErrorCode>([...COMMON_ERRORS[endpoint.auth], ...endpoint.errors]);
  const checked = endpoint.validatedBy !== 'handler';
  if (endpoint.params || (checked && (endpoint.body || endpoint.query))) codes.add('validation_error');
  if (endpoint.body && checked) for (const c of ['invalid_json', 'unsupported_media_type', 'payload_too_large'] as const) codes.add(c);
  if (endpoint.bodyEncoding === 'binary') for (const c of ['unsupported_media_type', 'payload_too_large'] as const) codes.add(c);
  return [...codes];
}

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  none: [],
  api_key: [{ ApiKeyHeader: [] }, { BearerApiKey: [] }],
  console: [{ ConsoleSession: [] }],
  console_admin: [{ ConsoleSession: [] }],
  access_token: [{ McpOAuth: [] }],
  device: [{ SyncDevice: [] }],
};

/** The security schemes the document names (by default or on an operation): the hub's document has no API keys. */
function usedSchemes(
  security: Record<string, string[]>[],
  paths: OpenApiDocument['paths'],
  schemes: Record<string, unknown>,
): Record<string, unknown> {
  const used = new Set(security.flatMap((requirement) => Object.keys(requirement)));
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const requirements = (operation as { security?: Record<string, string[]>[] }).security ?? [];
      for (const requirement of requirements) for (const name of Object.keys(requirement)) used.add(name);
    }
  }
  return Object.fromEntries(Object.entries(schemes).filter(([name]) => used.has(name)));
}

/** A path that takes the rest of the URL ({name*}) is, to OpenAPI, one parameter. */
function restOfPath(path: string): string | undefined {
  return /\{([^}]+)\*\}$/.exec(path)?.[1];
}

export interface DocumentOptions {
  version: string;
  title: string;
  description: string;
  /** The server URL paths are written below; an endpoint outside it is written in full, with its own server (the root). */
  serverUrl: string;
  /** The document's default security (each operation states its own); an API key when absent. */
  security?: Record<string, string[]>[];
}

/** An OpenAPI 3.1 document generated from contract lines. */
export function buildOpenApiDocument(endpoints: readonly Endpoint[], options: DocumentOptions): OpenApiDocument {
  const components: Record<string, JsonSchema> = {};
  const convert = makeConverter(components);
  const security = options.security ?? [{ ApiKeyHeader: [] }, { BearerApiKey: [] }];
  const error = convert(errorBodySchema, 'output');
  // With a named schema inside it (ValidationIssue), zod files Error itself among the components and answers a $ref to it.
  if (error.$ref === undefined) components.Error = error;
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();

  for (const endpoint of endpoints) {
    tags.add(endpoint.tag);
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(endpoint.responses)) {
      const contentType = response.contentType ?? 'application/json';
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(response.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
              ),
            }
          : {}),
        ...(response.schema
          ? { content: { [contentType]: { schema: convert(response.schema, 'output') } } }
          : response.contentType
            ? { content: { [contentType]: {} } }
            : {}),
      };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errorsOf(endpoint)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      // A protocol's own error answer (RFC 6749 on the OAuth routes) is the one documented.
      if (responses[String(status)] !== undefined) continue;
      responses[String(status)] = {
        description: codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join(' '),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const rest = restOfPath(endpoint.path);
    const restParameter =
      rest === undefined
        ? []
        : [{ name: rest, in: 'path', required: true, description: 'The rest of the path, slashes included.', schema: { type: 'string' } }];
    const bodyType = endpoint.bodyEncoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    // Raw bytes have no schema but their media type (OpenAPI 3.1: an empty schema, or contentMediaType).
    const binaryBody = {
      required: true,
      content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
    };
    const headerParameters = Object.entries(endpoint.headers ?? {}).map(([name, h]) => ({
      name,
      in: 'header',
      required: h.required,
      description: h.description,
      schema: { type: 'string' },
    }));
    const operation: Record<string, unknown> = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      ...(endpoint.description ? { description: endpoint.description } : {}),
      tags: [endpoint.tag],
      parameters: [
        ...parametersOf(convert, endpoint.params, 'path'),
        ...restParameter,
        ...parametersOf(convert, endpoint.query, 'query'),
        ...headerParameters,
      ],
      ...(endpoint.bodyEncoding === 'binary'
        ? { requestBody: binaryBody }
        : endpoint.body
          ? { requestBody: { required: true, content: { [bodyType]: { schema: convert(endpoint.body, 'input') } } } }
          : {}),
      responses,
      security: SECURITY[endpoint.auth],
      ...(endpoint.scope ? { 'x-required-scope': endpoint.scope } : {}),
    };
    const full = endpointPath(endpoint).replace(/\{([^}]+)\*\}$/, '{$1}');
    const inside = full.startsWith(`${options.serverUrl}/`) || full === options.serverUrl;
    const key = inside ? full.slice(options.serverUrl.length) || '/' : full;
    paths[key] = { ...paths[key], ...(inside ? {} : { servers: ROOT_SERVER }), [endpoint.method.toLowerCase()]: operation };
  }

  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.serverUrl, description: 'This Courtier service' }],
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: components,
      securitySchemes: usedSchemes(security, paths, {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: `Scopes: ${Object.keys(SCOPES).join(', ')}.` },
        BearerApiKey: { type: 'http', scheme: 'bearer', description: 'The same API key, as Authorization: Bearer <key>.' },
        ConsoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'courtier_session',
          description:
            'The console’s session cookie (POST /api/v1/console/session). Anything but a read also needs X-CSRF-Token, the value of the courtier_csrf cookie (on the office LAN listener, over HTTPS, both cookies carry the __Host- prefix).',
        },
        SyncDevice: {
          type: 'http',
          scheme: 'bearer',
          description: 'A sync device’s credential, received once at pairing (POST /sync/v1/pair).',
        },
        McpOAuth: {
          type: 'oauth2',
          description: 'MCP access tokens, obtained through dynamic registration and the authorization code flow with PKCE S256.',
          flows: {
            authorizationCode: {
              authorizationUrl: '/api/v1/mcp/oauth/authorize',
              tokenUrl: '/api/v1/mcp/oauth/token',
              refreshUrl: '/api/v1/mcp/oauth/token',
              scopes: Object.fromEntries(MCP_SCOPES.map((s) => [s, SCOPES[s]])),
            },
          },
        },
      }),
    },
    security,
    'x-error-codes': Object.fromEntries(
      (Object.keys(ERROR_STATUS) as ErrorCode[]).map((c) => [c, { status: ERROR_STATUS[c], description: ERROR_DESCRIPTIONS[c] }]),
    ),
  };
}
