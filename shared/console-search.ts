import { z } from 'zod';
import { consoleJobSchema } from './console-automation.js';
import { consoleDevisSchema } from './console-records.js';
import { clientSchema, opportunitySchema } from './crm.js';
import { defineEndpoint } from './endpoint.js';

/** The console header's search: one text, the cabinet's records of every kind that it names. */

export const SEARCH_GROUP_SIZE = 8;

const group = <T extends z.ZodType>(item: T, what: string) =>
  z.object({
    data: z.array(item).describe(`At most ${SEARCH_GROUP_SIZE} ${what}, newest first.`),
    has_more: z.boolean().describe('More match than shown: the list page, filtered by the same text, shows them all.'),
  });

export const searchResultsSchema = z
  .object({
    q: z.string(),
    clients: group(clientSchema, 'clients whose last name, first name, company name or email holds the text'),
    opportunities: group(opportunitySchema, 'opportunities whose title or contact (name, company, email) holds the text'),
    devis: group(consoleDevisSchema, 'quotes of the clients found'),
    jobs: group(consoleJobSchema, 'pricings whose insured or client is named by the text, or whose id starts or ends with it'),
  })
  .meta({ id: 'ConsoleSearchResults' });
export type SearchResults = z.infer<typeof searchResultsSchema>;

export const consoleSearch = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/search',
  operationId: 'consoleSearch',
  summary: 'Find the cabinet’s clients, opportunities, quotes and pricings by a name, an email or a reference',
  description: 'Case-insensitive, anywhere in the word; erased clients are never found.',
  tag: 'Console: records',
  auth: 'console',
  query: z.object({ q: z.string().trim().min(2, 'type at least two characters').max(100) }),
  responses: { 200: { description: 'What the text names, by kind.', schema: searchResultsSchema } },
  errors: [],
});

export const CONSOLE_SEARCH_ENDPOINTS = [consoleSearch] as const;
