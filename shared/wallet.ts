import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/** Robot credits: a cabinet's wallet, its balance and its ledger of grants, debits and refunds. */
export const LEDGER_KINDS = ['grant', 'debit', 'refund', 'opening'] as const;

export const ledgerEntrySchema = z.object({
  id: z.int(),
  kind: z.enum(LEDGER_KINDS),
  amount: z.int().describe('Credits; positive for grants, refunds and openings, negative for debits.'),
  job_id: z.uuid().nullable(),
  note: z.string().nullable(),
  created_at: z.iso.datetime(),
});

export const walletSchema = z
  .object({
    balance: z.int(),
    synced: z
      .boolean()
      .describe(
        'true: the cabinet syncs, and this is its one wallet, kept by its hub: the balance the hub last gave, with what this install spent or got back since.',
      ),
    unconfirmed_credits: z
      .int()
      .describe(
        'Credits this install spent (net of refunds) that the hub has not acknowledged yet; at most the offline allowance. 0 when the cabinet does not sync.',
      ),
    ledger: z
      .array(ledgerEntrySchema)
      .describe('The 50 most recent entries, newest first; with sync on, the other installs’ and the hub’s too.'),
  })
  .meta({ id: 'Wallet' });
export type Wallet = z.infer<typeof walletSchema>;

export const getWallet = defineEndpoint({
  method: 'GET',
  path: '/wallet',
  operationId: 'getWallet',
  summary: 'Robot credits: balance and recent ledger',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  responses: { 200: { description: 'The wallet.', schema: walletSchema } },
  errors: [],
});
