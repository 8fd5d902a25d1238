import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';

const MAX_JSON_DEPTH = 64;

const POISONING_REFUSED =
  'The body has a "__proto__" key, or a "constructor" key holding "prototype": Courtier refuses both, at any depth.';

/** JSON.parse defines "__proto__" as a plain own key, so this check pollutes nothing. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether JSON text nests arrays and objects deeper than the limit (strings are skipped). */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      i = closingQuote(text, i + 1);
      // Unterminated: JSON.parse refuses it next.
      if (i < 0) return false;
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/**
 * Where the string whose content starts at `from` ends: its next quote not escaped by an odd run of
 * backslashes, or -1. Found with indexOf rather than char by char: most of a body is in strings,
 * and checking a large sync push one char at a time holds the event loop.
 */
function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/**
 * JSON only: text/plain bodies would otherwise reach handlers as strings. An empty JSON body is
 * "no body" (many clients send Content-Type on a bodiless POST); the route's schema decides.
 * Used by the agent's app and the hub's.
 */
export function useJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    // Deep nesting would overflow the stack of every later JSON walk (hashing, storing): refuse it here.
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(new ApiError('invalid_json', `The body is nested more than ${MAX_JSON_DEPTH} levels deep.`), undefined);
    return parseJson(request, text, (error, value) => {
      // Fastify's parser words every refusal alike; JSON that parses is one refused for its keys.
      if (error && isValidJson(text)) return done(new ApiError('invalid_json', POISONING_REFUSED), undefined);
      return done(error, value);
    });
  });
}
