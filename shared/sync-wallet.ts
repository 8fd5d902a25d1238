import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import { deviceIdSchema, isoTime, PROTOCOL_HEADERS } from './sync-protocol.js';

/**
 * The wallet exchange between an install and its hub, which keeps the cabinet's one wallet
 * (docs/SYNC.md, Credits): the entries a device sends, the ledger the hub answers.
 */

/** The most credits one job may cost (COURTIER_CREDITS_PER_QUOTE and …_PER_ROUTINE stop there): the hub refuses a larger debit. */
const MAX_JOB_COST = 100_000;
/** The most credits an opening entry (the balance an install brings when it registers its cabinet) or an operator's grant may carry. */
export const MAX_GRANT_CREDITS = 10_000_000;
/** Most credits entries in one wallet exchange, sent or served. */
const MAX_WALLET_ENTRIES = 500;
/** The largest exchange's body: 500 entries with notes of an install's length take well under half of it. */
export const MAX_WALLET_BYTES = 256 * 1024;

/** What an install sends of its own credits entries: a job's debit or refund, or the balance it brings when it registers its cabinet. */
const DEVICE_WALLET_KINDS = ['debit', 'refund', 'opening'] as const;
/** Every kind of the cabinet's ledger on the hub: a grant is the operator's alone. */
const HUB_WALLET_KINDS = ['grant', ...DEVICE_WALLET_KINDS] as const;
export type HubWalletKind = (typeof HUB_WALLET_KINDS)[number];

const walletNote = z.string().max(200).nullable();

const sentWalletEntrySchema = z
  .object({
    entry_id: z.uuid().describe('Made by the install: an entry sent again (a lost answer) is acknowledged, never stored twice.'),
    kind: z.enum(DEVICE_WALLET_KINDS),
    amount: z
      .int()
      .min(-MAX_JOB_COST)
      .max(MAX_GRANT_CREDITS)
      .describe('Credits: negative for a debit, the debit’s opposite for its refund, the balance brought for an opening.'),
    job_id: z.uuid().nullable().describe('The job debited or refunded; null for an opening.'),
    note: walletNote,
  })
  .meta({ id: 'SyncWalletEntrySent' });
export type SentWalletEntry = z.infer<typeof sentWalletEntrySchema>;

const walletExchangeBodySchema = z
  .object({
    after: z.int().min(0).describe('The last wallet seq this install holds; 0 for the whole ledger.'),
    entries: z.array(sentWalletEntrySchema).max(MAX_WALLET_ENTRIES).describe('This install’s entries the hub has not acknowledged yet.'),
  })
  .meta({ id: 'SyncWalletExchange' });
export type WalletExchangeBody = z.infer<typeof walletExchangeBodySchema>;

const hubWalletEntrySchema = z
  .object({
    seq: z.int().min(1).describe('The cabinet’s wallet sequence on the hub: commit order.'),
    entry_id: z.uuid(),
    kind: z.enum(HUB_WALLET_KINDS),
    amount: z.int(),
    job_id: z.uuid().nullable(),
    device_id: deviceIdSchema.nullable().describe('The install that made it; null for the operator’s grants.'),
    note: walletNote,
    created_at: isoTime,
  })
  .meta({ id: 'SyncWalletEntry' });
export type HubWalletEntry = z.infer<typeof hubWalletEntrySchema>;

export const walletExchangeResponseSchema = z
  .object({
    balance: z.int().describe('The cabinet’s balance on the hub, every entry sent included: the authority.'),
    acknowledged: z
      .array(z.object({ entry_id: z.uuid(), seq: z.int().min(1) }))
      .describe('Every entry sent, as the hub holds it (stored now or before).'),
    entries: z.array(hubWalletEntrySchema).describe('The cabinet’s entries after `after`, in seq order, the caller’s own included.'),
    last_seq: z.int().min(0).describe('Pass it as `after` next time.'),
    more: z.boolean().describe('More entries wait: exchange again at once.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncWalletAnswer' });
export type WalletExchangeResponse = z.infer<typeof walletExchangeResponseSchema>;

export const exchangeWallet = defineEndpoint({
  method: 'POST',
  surface: 'hub',
  path: '/wallet',
  operationId: 'exchangeWallet',
  summary: 'Send this device’s credits entries; get the cabinet’s balance and ledger',
  description:
    'The hub keeps the cabinet’s one wallet. In one transaction, under the cabinet’s lock: stores the entries sent that it does not hold yet (an entry it holds is acknowledged again, never doubled), moves the balance, and answers it with the entries after `after` (grants, other installs’ debits and refunds, this device’s own). ' +
    'A debit past what a job may cost is a validation_error. Refused whole with wallet_entry_refused (details.refused), nothing stored: a debit that is not negative, a refund without this device’s debit of the job or of another amount, a second debit or refund of a job by this device, an opening from a device that did not register the cabinet or a second one, an entry id the cabinet holds for another entry. A device never sends a grant: only the operator mints credits (courtier hub credits grant). At most 500 entries, in a body of at most 256 KiB (payload_too_large); a cabinet whose ledger would pass the hub’s quota of entries is refused whole with hub_quota_exceeded.',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  body: walletExchangeBodySchema,
  responses: { 200: { description: 'Stored; the cabinet’s balance and entries.', schema: walletExchangeResponseSchema } },
  errors: [
    'validation_error',
    'wallet_entry_refused',
    'payload_too_large',
    'hub_quota_exceeded',
    'sync_protocol_too_old',
    'sync_protocol_unsupported',
    'sync_too_many_requests',
    'hub_database_unavailable',
  ],
});
