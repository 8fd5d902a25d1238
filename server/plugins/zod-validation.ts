import fp from 'fastify-plugin';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { toValidationIssues, validationError } from '../http/validation.js';

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Route schemas are zod schemas from shared/; every failure becomes one 400 validation_error. */
export const zodValidationPlugin = fp(
  async (app) => {
    const compiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
      const part = PART_NAMES[httpPart ?? 'body'] ?? 'body';
      return (data: unknown) => {
        // Fastify hands an absent body over as null; to the schema it is undefined (an optional body).
        const input = part === 'body' && data === null ? undefined : data;
        const result = schema.safeParse(input);
        return result.success ? { value: result.data } : { error: validationError(toValidationIssues(result.error, part, input)) };
      };
    };
    app.setValidatorCompiler(compiler);
  },
  { name: 'courtier-zod-validation' },
);
