import fp from 'fastify-plugin';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { unsyncableTextIssues } from '../platform/http/syncable-text.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface ZodValidationOptions {
  /**
   * Refuse, anywhere in a body, query or path (keys included), text the sync cannot carry: the
   * agent's routes do, so that nothing it stores can block its sync queue. The hub checks what it
   * stores itself (server/hub/storable.ts).
   */
  refuseUnsyncableText?: boolean;
}

/** Route schemas are zod schemas from shared/; every failure becomes one 400 validation_error. */
export const zodValidationPlugin = fp<ZodValidationOptions>(
  async (app, options) => {
    const compiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
      const part = PART_NAMES[httpPart ?? 'body'] ?? 'body';
      return (data: unknown) => {
        // Fastify hands an absent body over as null; to the schema it is undefined (an optional body).
        const input = part === 'body' && data === null ? undefined : data;
        const result = schema.safeParse(input);
        const textIssues = options.refuseUnsyncableText ? unsyncableTextIssues(input, part) : [];
        if (result.success && textIssues.length === 0) return { value: result.data };
        const schemaIssues = result.success ? [] : toValidationIssues(result.error, part, input);
        return { error: validationError([...schemaIssues, ...textIssues]) };
      };
    };
    app.setValidatorCompiler(compiler);
  },
  { name: 'courtier-zod-validation' },
);
