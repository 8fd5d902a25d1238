import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { maskPersonalData } from '../../shared/masking.js';
import { TOOL_RESULTS, type ToolPayloadKind, type ToolPayloads } from '../../shared/mcp.js';
import type { McpScope } from '../../shared/oauth.js';
import type { RobotControl } from '../automation/robot-control.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { unsyncableTextIssues } from '../platform/http/syncable-text.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';
import { idempotencyKeySchema, requestHash, type Idempotency } from '../idempotency/service.js';
import type { McpAccess } from '../oauth/access.js';
import { getCabinetSettings } from '../tenancy/service.js';

/**
 * How an MCP tool is declared and called: its arguments validated by the same zod schemas as REST,
 * its result masked by the cabinet's setting (shared/masking.ts) and checked against its output
 * schema (shared/mcp.ts, the REST responses'), and, for tools that act, an optional
 * idempotency_key. The tools themselves are in tools.ts and its families (crm-tools.ts,
 * devis-tools.ts, pricing-tools.ts).
 */

/** What a tool call runs with: the service, and who calls, from the access token. */
export interface ToolContext {
  deps: Deps;
  worker: RobotControl;
  /** The tools that act take an optional idempotency_key, kept per grant like the API's Idempotency-Key per API key. */
  idempotency: Idempotency;
  access: McpAccess;
  /** This service's origin as the client reached it (no trailing slash), computed on demand. */
  baseUrl: () => string;
}

export interface ToolSpec<S extends z.ZodType, K extends ToolPayloadKind> {
  name: string;
  title: string;
  /** For the model: what the tool returns, when to use it, where its ids come from. */
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /** The scope the token needs; null: any valid token. */
  scope: McpScope | null;
  /**
   * What the tool returns: its outputSchema is TOOL_RESULTS[returns] (shared/mcp.ts), and its
   * personal data (shared/masking.ts) is masked while the cabinet has not enabled LLM data sharing.
   */
  returns: K;
  /** It acts (creates, spends credits): it takes an optional idempotency_key, so that a retried call acts once. */
  idempotent?: true;
  run: (ctx: ToolContext, args: z.output<S>) => ToolPayloads[K];
}

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

export const NO_ARGUMENTS = z.strictObject({});

/** 'a, b or c': the values of an enum for a description, read from the contract rather than copied into the text. */
export function listed(values: readonly string[], last: 'or' | 'and' = 'or'): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} ${last} ${values.at(-1)}`;
}

/** One tool of the catalogue: its tools/list entry, its scope, and call(), which validates and runs. */
export interface McpTool {
  name: string;
  scope: McpScope | null;
  descriptor: Tool;
  call(ctx: ToolContext, args: unknown): CallToolResult;
}

type InputSchema = Tool['inputSchema'];
type OutputSchema = NonNullable<Tool['outputSchema']>;
type JsonSchema = Record<string, unknown>;

/** A union's branches are all objects (directly or through a $ref into $defs). */
function allObjects(branches: unknown, defs: Record<string, JsonSchema> | undefined): boolean {
  if (!Array.isArray(branches)) return false;
  return branches.every((branch: JsonSchema) => {
    const target = typeof branch.$ref === 'string' ? defs?.[branch.$ref.slice('#/$defs/'.length)] : branch;
    return target?.type === 'object';
  });
}

/**
 * JSON Schema 2020-12 of a tool's arguments (io: input, as the client sends them: defaults make
 * fields optional) or of its result (io: output). A schema named with .meta({id}) comes out as a
 * root $ref: inlined here, since MCP wants type: object at the root; a union of objects (a dry
 * run or an enqueued job) gets type: object beside its anyOf for the same reason. Regex noise that
 * format already says, and the safe-integer bounds zod puts on every int, are dropped (fewer
 * tokens for the model).
 */
function toToolSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema & { type: 'object' } {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      if (
        jsonSchema.format === 'date-time' ||
        jsonSchema.format === 'date' ||
        jsonSchema.format === 'email' ||
        jsonSchema.format === 'uuid'
      ) {
        delete jsonSchema.pattern;
      }
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  }) as JsonSchema;
  delete json.$schema;
  let root: JsonSchema = json;
  const ref = json.$ref;
  const defs = json.$defs as Record<string, JsonSchema> | undefined;
  if (typeof ref === 'string' && ref.startsWith('#/$defs/') && defs) {
    const id = ref.slice('#/$defs/'.length);
    const { [id]: inlined, ...rest } = defs;
    const { $ref: _ref, $defs: _defs, ...outer } = json;
    root = { ...outer, ...inlined, ...(Object.keys(rest).length > 0 ? { $defs: rest } : {}) };
  }
  if (root.type === undefined && allObjects(root.anyOf, defs)) root = { type: 'object', ...root };
  if (root.type !== 'object') throw new Error(`A tool's ${io} must be an object schema, got ${JSON.stringify(root.type)}.`);
  return root as JsonSchema & { type: 'object' };
}

export function toInputSchema(schema: z.ZodType): InputSchema {
  return toToolSchema(schema, 'input');
}

export function toOutputSchema(schema: z.ZodType): OutputSchema {
  return toToolSchema(schema, 'output');
}

/**
 * A result: the value as structuredContent (checked by clients against the outputSchema) and,
 * for clients older than protocol 2025-06-18, the same JSON as text.
 */
function successResult(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

/**
 * A service error as the model sees it: the REST error body, minus request_id, as text in an
 * isError result. No structuredContent: it would have to match the tool's outputSchema, which
 * describes what the tool answers when it succeeds (clients validate any structuredContent).
 */
export function errorResult(error: ApiError): CallToolResult {
  const body = { error: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

/** Read at call time: the console's switch takes effect on the next call. */
export function sharesPersonalData({ deps, access }: ToolContext): boolean {
  return getCabinetSettings(deps, access.cabinetId).llm_data_sharing;
}

/** A tool with its argument type erased: call() validates the arguments, then runs it. */
export interface DefinedTool extends Omit<ToolSpec<z.ZodType, ToolPayloadKind>, 'run'> {
  /** The schema of what it answers: TOOL_RESULTS[returns]. */
  output: z.ZodType;
  call(ctx: ToolContext, args: unknown): CallToolResult;
}

/** The argument that makes a retried call safe; the same rule as the API's Idempotency-Key header. */
const idempotencyKeyArgument = idempotencyKeySchema
  .optional()
  .describe(
    'A fresh UUID per distinct action. Calling again with the same key and arguments (after a timeout, say) returns the first result instead of acting twice; ' +
      'the same key with other arguments is the error idempotency_key_reused. Kept 24 hours.',
  );

function withIdempotencyKey(input: z.ZodType): z.ZodType {
  if (!(input instanceof z.ZodObject)) throw new Error('A tool that takes an idempotency_key has object arguments.');
  return input.extend({ idempotency_key: idempotencyKeyArgument });
}

/**
 * Runs a tool's action at most once per (grant, tool, key): the result is stored in the action's
 * own transaction (see server/idempotency), and a retry returns it. It is masked afterwards, by
 * the cabinet's setting at the time of each answer.
 */
function actOnce(ctx: ToolContext, tool: string, key: string, args: object, act: () => object): object {
  const outcome = ctx.idempotency.once(
    {
      id: { cabinetId: ctx.access.cabinetId, caller: `grant:${ctx.access.grantId}`, endpoint: `MCP tools/call ${tool}`, key },
      requestHash: requestHash(args),
    },
    () => {
      const response = { statusCode: 200, body: JSON.stringify(act()), headers: {} };
      return { response, stored: response };
    },
  );
  return JSON.parse(outcome.response.body) as object;
}

/**
 * The result as it leaves: masked by the cabinet's setting at the time of the answer, then checked
 * against the output schema. Masks turn strings into strings, and the masked fields are plain
 * strings in the schemas (the personal-data test runs every tool through the SDK client, which
 * validates); a result outside its schema is a bug of ours, answered as internal_error.
 */
function outgoing<K extends ToolPayloadKind>(ctx: ToolContext, tool: string, kind: K, value: ToolPayloads[K]): object {
  const result = sharesPersonalData(ctx) ? value : maskPersonalData(kind, value);
  const checked = TOOL_RESULTS[kind].safeParse(result);
  if (!checked.success) throw new Error(`${tool} answered outside its output schema: ${z.prettifyError(checked.error)}`);
  // The value itself, not zod's copy: the text content and structuredContent are the same JSON.
  return result;
}

export function defineTool<S extends z.ZodType, K extends ToolPayloadKind>(spec: ToolSpec<S, K>): DefinedTool {
  const { run, ...rest } = spec;
  const input = spec.idempotent ? withIdempotencyKey(spec.input) : spec.input;
  return {
    ...rest,
    input,
    output: TOOL_RESULTS[spec.returns],
    call(ctx, args) {
      const given = args ?? {};
      const parsed = input.safeParse(given);
      // The REST routes' rule: nothing the sync cannot carry is stored (server/platform/http/syncable-text.ts).
      const textIssues = unsyncableTextIssues(given, 'arguments');
      if (!parsed.success || textIssues.length > 0) {
        const schemaIssues = parsed.success ? [] : toValidationIssues(parsed.error, 'arguments', given);
        return errorResult(validationError([...schemaIssues, ...textIssues]));
      }
      try {
        const { idempotency_key: key, ...actionArgs } = parsed.data as { idempotency_key?: string };
        const act = () => run(ctx, actionArgs as z.output<S>);
        const value = key === undefined ? act() : actOnce(ctx, spec.name, key, actionArgs, act);
        return successResult(outgoing(ctx, spec.name, spec.returns, value as ToolPayloads[K]));
      } catch (err) {
        if (err instanceof ApiError) return errorResult(err);
        throw err;
      }
    },
  };
}
