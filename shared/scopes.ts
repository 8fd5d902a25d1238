import { z } from 'zod';

/**
 * The REST scopes: the seven of part 5.1, and automation:artifacts, with what each lets a key do
 * (shown in the console and the docs).
 */
export const SCOPES = {
  'crm:read': 'Read opportunities and clients.',
  'crm:write': 'Create and change opportunities and clients.',
  'devis:read': 'Read quotes and download their PDFs.',
  'devis:draft': 'Create draft quotes and sign quotes.',
  'automation:read': 'Read tarification jobs, the catalogue of products and the wallet.',
  'automation:enqueue': 'Launch tarifications, which spend Robot credits.',
  'automation:artifacts':
    'Download the screenshot and browser trace of a failed robot run. They show the insurer portal’s pages as the robot saw them (the client’s data on them; never the portal password).',
  'webhooks:manage': 'Create, change, test and delete webhook subscriptions.',
} as const;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as [Scope, ...Scope[]];
export const scopeSchema = z.enum(SCOPE_NAMES);
