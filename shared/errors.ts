import { z } from 'zod';

/**
 * Every error code the service answers with, and its HTTP status. The error handler is the only
 * place that turns one of these into a response body; the OpenAPI document lists them per route.
 */
export const ERROR_STATUS = {
  validation_error: 400,
  bad_request: 400,
  invalid_json: 400,
  invalid_cursor: 400,
  invalid_webhook_url: 400,
  unknown_event_type: 400,
  import_file_unreadable: 400,
  import_file_empty: 400,
  import_file_too_large: 413,
  missing_credentials: 401,
  invalid_api_key: 401,
  api_key_revoked: 401,
  api_key_expired: 401,
  invalid_token: 401,
  not_signed_in: 401,
  invalid_credentials: 401,
  setup_local_only: 403,
  local_only: 403,
  lan_sharing_forbidden: 403,
  address_blocked: 403,
  lan_address_unavailable: 400,
  lan_managed_by_policy: 409,
  lan_name_outside_ca: 409,
  ip_not_allowed: 403,
  insufficient_scope: 403,
  origin_not_allowed: 403,
  invalid_signature: 403,
  invalid_csrf_token: 403,
  consent_forbidden: 403,
  llm_data_sharing_off: 403,
  admin_only: 403,
  // console: account basics (statuses)
  wrong_current_password: 403,
  account_disabled: 403,
  password_change_required: 403,
  own_account: 409,
  // console: admin slice (statuses)
  setup_already_done: 409,
  email_taken: 409,
  cabinet_choice_required: 409,
  last_admin: 409,
  // console: automation slice (statuses)
  insurer_login_busy: 409,
  // console: webhooks slice (statuses)
  not_found: 404,
  unknown_product: 404,
  unknown_line: 404,
  line_not_priced: 422,
  risk_not_accepted: 422,
  answers_missing: 422,
  no_insurer_available: 422,
  comparison_not_finished: 409,
  client_required: 422,
  offer_not_priced: 422,
  unknown_insurer: 404,
  pdf_not_available: 404,
  consent_request_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  insurer_credentials_missing: 409,
  job_not_cancellable: 409,
  job_not_retryable: 409,
  job_not_awaiting_mfa: 409,
  mfa_answer_mismatch: 400,
  job_runs_elsewhere: 409,
  invalid_stage_transition: 409,
  invalid_devis_transition: 409,
  credits_exhausted: 402,
  offline_allowance_exhausted: 402,
  credits_on_hub: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  misdirected_request: 421,
  idempotency_key_reused: 422,
  rate_limited: 429,
  too_many_login_attempts: 429,
  rpa_quota_exceeded: 429,
  rpa_replay_detected: 429,
  // sync (statuses)
  invalid_pairing_code: 401,
  invalid_device_credential: 401,
  device_revoked: 401,
  too_many_pairing_attempts: 429,
  cabinet_already_on_hub: 409,
  pairing_code_joins: 409,
  hub_quota_exceeded: 409,
  sync_protocol_unsupported: 400,
  sync_too_many_requests: 429,
  sync_gap: 409,
  device_rewound: 409,
  cursor_expired: 410,
  clock_skew: 409,
  sync_protocol_too_old: 426,
  blob_hash_mismatch: 400,
  wallet_entry_refused: 409,
  hub_unreachable: 502,
  hub_database_unavailable: 503,
  invalid_hub_url: 400,
  sync_already_on: 409,
  sync_off: 409,
  cabinet_already_here: 409,
  request_header_fields_too_large: 431,
  internal_error: 500,
  rpa_circuit_open: 503,
  api_rpa_temporarily_disabled: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  validation_error:
    'A body, query or path parameter is invalid; details lists each problem with its path. Text anywhere in a request, keys included, must not contain a NUL character (U+0000) or an unpaired surrogate (code custom).',
  import_file_unreadable:
    'The file to import is neither a CSV file (UTF-8, UTF-16 or Windows-1252 text) nor an Excel workbook (.xlsx); details.reason says what it looks like (xls: an older Excel file).',
  import_file_empty: 'The file to import has no row of data below its header row.',
  import_file_too_large: 'The file to import is larger than details.max_bytes, or has more rows than details.max_rows: split it.',
  invalid_json:
    'The body is not valid JSON, is nested more than 64 levels deep, or has a "__proto__" key (or a "constructor" key holding "prototype").',
  bad_request: 'The request could not be read: a malformed URL, header or framing.',
  request_timeout: 'The request took too long to arrive.',
  uri_too_long: 'A path segment is longer than 200 characters.',
  request_header_fields_too_large: 'The headers are larger than 16 KiB.',
  invalid_webhook_url: 'The webhook url must be an absolute https:// URL without credentials.',
  unknown_event_type: 'An event type is not in the catalogue; use the listed types or the single value *.',
  invalid_cursor: 'The cursor was altered, truncated, made for other filters or another cabinet; start again without cursor.',
  invalid_signature: 'The signed download link was altered or has expired (links live 5 minutes); ask for a new one.',
  pdf_not_available: 'This quote has no PDF (yet): it has not been priced.',
  idempotency_conflict: 'Another request with the same Idempotency-Key is in progress; retry the same request.',
  invalid_stage_transition: 'The opportunity cannot move to that stage (won and lost are final unless reopen is true).',
  invalid_devis_transition: 'The quote is not in a state that allows this (only a priced quote can be signed).',
  idempotency_key_reused: 'This Idempotency-Key was already used with a different body on this endpoint; use a fresh key.',
  missing_credentials: 'No API key was sent (X-API-Key or Authorization: Bearer).',
  invalid_api_key: 'The API key is not known.',
  api_key_revoked: 'The API key was revoked.',
  api_key_expired: 'The API key has passed its expiry date.',
  ip_not_allowed: "The caller's IP address is not in the key's allowlist.",
  insufficient_scope: 'The key lacks the scope this route needs; the message names it.',
  origin_not_allowed: 'A browser request came from an origin that is not configured.',
  not_found: 'No such route, or no such resource in this cabinet.',
  method_not_allowed: 'The path exists but not with this method; the Allow header lists the methods.',
  payload_too_large:
    'The body is larger than the route accepts: 1 MiB of JSON on the local service; on a sync hub, 8 MiB for a push and 20 MiB for a PDF. The message gives the limit.',
  unsupported_media_type:
    'The body is not of the type the route reads: application/json, or application/octet-stream for a PDF sent to a sync hub.',
  misdirected_request: 'The Host header does not name this local service.',
  rate_limited: "The key's request rate was exceeded; Retry-After says when to try again.",
  internal_error: 'A bug on our side; the request_id helps us find it.',
  invalid_token: 'The MCP access token is unknown, expired or revoked; refresh it or authorize again.',
  not_signed_in: 'This console request needs a signed-in user; sign in first.',
  invalid_credentials: 'The email or the password is wrong.',
  too_many_login_attempts: 'Too many failed sign-ins for this account or from this address; Retry-After says when to try again.',
  invalid_csrf_token: 'The form was not sent from the page this session opened (missing or wrong CSRF token); open the page again.',
  consent_forbidden: 'This consent request belongs to another signed-in user.',
  llm_data_sharing_off:
    'The cabinet does not share its clients’ personal data with AI assistants (MCP), so this tool gives nothing that holds it (a quote’s PDF): a person gets it in the console, and an administrator can enable LLM data sharing in the console’s Settings.',
  consent_request_not_found: 'The consent request is unknown, already answered or expired; start the connection again from the assistant.',
  admin_only: 'Only an administrator of the cabinet can do this.',
  // console: account basics (descriptions)
  wrong_current_password: 'The current password given is wrong; nothing was changed. It counts as a failed sign-in for the throttle.',
  account_disabled: 'This account is disabled; an administrator of the cabinet can enable it again.',
  password_change_required:
    'An administrator reset this account’s password: choose a new one (PUT /api/v1/console/account/password) before anything else.',
  own_account:
    'An administrator cannot disable, remove or reset the password of their own account here; change your own password on the My account page.',
  // console: admin slice (descriptions)
  setup_already_done: 'First-run setup is only possible while the install has no cabinet; sign in instead.',
  email_taken:
    'An account with this email already exists in this cabinet (emails are unique per cabinet; other cabinets are not looked at).',
  cabinet_choice_required:
    'This email and password open accounts in several cabinets; details lists them ({cabinet_id, name}): sign in again with cabinet_id.',
  setup_local_only: 'First-run setup is accepted only from the machine that runs Courtier; open the console there.',
  local_only: 'This is served to the machine that runs Courtier only (over loopback), not on the office LAN listener.',
  lan_sharing_forbidden: 'The IT policy forbids sharing Courtier on the office LAN (allowLanSharing: false).',
  address_blocked:
    'This address failed to sign in too many times and is blocked on the office LAN for a while; an administrator can lift the block.',
  lan_address_unavailable: 'An address given for the LAN listener is not one of this machine’s; details list the ones it has.',
  lan_managed_by_policy: 'The IT policy presets the office LAN mode; change it in the policy file.',
  lan_name_outside_ca: 'A name given is outside what the office CA may certify; enable with a new CA (brokers then trust the new one).',
  last_admin: 'The cabinet would have no administrator left; make another user an administrator first.',
  // console: automation slice (descriptions)
  insurer_login_busy:
    'A robot is using this insurer login right now (portals log out a session when the same account logs in twice); test the login once the job has finished.',
  // console: webhooks slice (descriptions)
  credits_exhausted: 'The wallet cannot cover this run; no job was created. Top up, then retry with the same Idempotency-Key.',
  offline_allowance_exhausted:
    'With sync on, this install has used what it may do without the cabinet’s hub acknowledging it: details.allowance_of says which allowance (credits: spent net of refunds; runs: real tarifications enqueued since a pull last brought it the other installs’ jobs), details.used and details.allowance how much. No job was created. Once the install reaches the hub again, retry with the same Idempotency-Key.',
  credits_on_hub:
    'This cabinet syncs through a hub, which keeps its one wallet: credits are granted there (courtier hub credits grant), not on an install.',
  unknown_product: 'No such product; see GET /produits-disponibles.',
  unknown_line: 'No such line of business: the lines are auto (car) and mrh (home).',
  comparison_not_finished:
    'Some insurers of the comparison are still pricing: advise once every one has answered (its status is completed, partial or failed).',
  client_required: 'The comparison is not for a client: an advice document names the client. Compare again with client_id.',
  offer_not_priced:
    'The offer recommended is not one the comparison priced: name an insurer of resultats with a price, and one of its offres’ formule.',
  line_not_priced:
    'An insurer asked for does not price this line from the common risk: see compagnies in GET /automation/risques/{ligne}/schema.',
  risk_not_accepted:
    'An insurer asked for declines this risk, or a value is outside its limits (details.compagnie, the message says which).',
  answers_missing:
    'Insurers ask questions of their own that the risk does not answer: details.questions lists them by insurer; answer them in reponses.',
  no_insurer_available:
    'No insurer can price this risk for this key: none prices the line with the cabinet’s credentials set, or all declined it (details.ecartees).',
  unknown_insurer: 'No such insurer, or it does not offer this product.',
  insurer_credentials_missing: 'No portal credentials are configured for this insurer in this cabinet; set them in the console.',
  job_not_cancellable: 'The job has already finished.',
  job_not_retryable: 'Only a failed or cancelled job can be priced again; this one is still running or has a price.',
  job_not_awaiting_mfa: 'The job is not waiting for a code.',
  mfa_answer_mismatch:
    'The answer does not fit what the job asks (mfa.kind): {code} for otp and captcha, {approved: true} for app_approval, {answer} for question, one of the choices’ values when it has choices.',
  job_runs_elsewhere:
    'The job was enqueued on another computer of the cabinet (this one synced it): that computer’s robots run it, and only there can it be cancelled or given a code. Poll it here to follow it.',
  rpa_quota_exceeded: 'The cabinet reached its hourly tarification quota; wait until reset_at.',
  rpa_replay_detected:
    'The same request (compagnie, produit, dicData) came less than 10 minutes ago, under another key or on another computer of the cabinet (a job synced from it, finished or not): details.job_id is that job and details.job_status its status then, poll it; or wait retry_after_seconds, do not loop.',
  // sync (descriptions)
  invalid_pairing_code:
    'The pairing code is unknown, already used or expired (codes live 15 minutes); ask the hub’s operator for a new one (courtier hub invite).',
  invalid_device_credential: 'The device credential is not known to this hub; connect the install again with a new pairing code.',
  device_revoked:
    'This device was revoked on the hub; nothing more syncs from or to it. Connect again with a new pairing code if that was a mistake.',
  too_many_pairing_attempts: 'Too many wrong pairing codes from this address; Retry-After says when to try again.',
  cabinet_already_on_hub:
    'A cabinet with this id is already on the hub; nothing was paired. Ask the hub’s operator: only they can tell whether it is yours.',
  pairing_code_joins:
    'This code joins a cabinet the hub already has, and not this install’s: use it with `courtier sync join` on a new install. Connecting this cabinet needs a code made for it (--new-cabinet, or --cabinet with its own id to reconnect it).',
  hub_quota_exceeded:
    'The cabinet reached a quota of the hub (details.quota: changes, change_bytes, blobs, blob_bytes or wallet_entries; details.limit); nothing was stored. The hub’s operator can raise it; the changes and credits entries stay queued meanwhile.',
  sync_protocol_unsupported: 'This install speaks a sync protocol newer than the hub’s; update the hub. Its changes stay queued meanwhile.',
  sync_too_many_requests: 'This device has too many requests (or long polls) in progress at the hub; retry after Retry-After.',
  sync_gap:
    'The batch does not start where the hub expects this device’s changes to continue; details.expected_number says where. Send from that number.',
  device_rewound:
    'The hub holds other changes under these numbers: this install was restored from a backup. It numbers its queue from details.expected_number and pulls its own later changes back.',
  cursor_expired:
    'The hub no longer holds the changes after this cursor (details.oldest_seq: pull after it or later); the install reads the cabinet’s current state (GET /state) and pulls from its as_of_seq, keeping what it has not pushed yet.',
  clock_skew:
    'This machine’s clock is more than 5 minutes ahead of the hub’s; details.ahead_seconds says by how much. Set the clock right: the changes stay queued meanwhile.',
  sync_protocol_too_old:
    'This install’s version of Courtier is too old for the cabinet’s other installs; update it. Its changes stay queued meanwhile.',
  invalid_hub_url: 'The hub URL must be https://, or http:// to this machine only (the device credential travels with every request).',
  sync_already_on: 'This cabinet already syncs with a hub; disconnect it first to connect it elsewhere.',
  sync_off: 'This cabinet does not sync with a hub; connect it first.',
  cabinet_already_here:
    'This install already holds that cabinet: it syncs through connect, not join. The pairing code is used up; ask for a new one if needed.',
  hub_database_unavailable:
    'The hub cannot reach its database right now (restarting, or down); nothing was stored. Try again in a moment: installs retry by themselves.',
  hub_unreachable: 'The hub could not be reached (or failed on its side); check its URL and this machine’s network, then try again.',
  blob_hash_mismatch: 'The uploaded bytes do not have the SHA-256 named in the path.',
  wallet_entry_refused:
    'The hub refused credits entries it would not store (details.refused: each entry_id with its reason: a grant from a device, a debit outside what a job costs, a refund without this device’s debit of the job or of another amount, a second debit or refund of a job, an opening from a device that did not register the cabinet); nothing was stored.',
  rpa_circuit_open: 'Too many technical failures at this insurer lately; retry after retry_after_seconds.',
  api_rpa_temporarily_disabled:
    'Robots are switched off for now: details.scope is install (the operator’s kill switch, for every cabinet) or cabinet (your administrators paused your cabinet’s robots); queued jobs wait. Retry later.',
};

/** A value an enum accepts, as JSON carries it. */
const primitiveSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * One problem of a validation_error. Besides the path and an English message, a problem the
 * schema found carries its kind (`code`, zod's issue codes) and the limits it broke, so that a
 * client can word it in its own language next to the field instead of showing the message.
 */
export const validationIssueSchema = z
  .object({
    path: z.string().describe('Where the problem is, e.g. body.contact.last_name or query.limit.'),
    message: z.string().describe('In English, for a developer; a client words the problem from code and its parameters.'),
    code: z
      .string()
      .optional()
      .describe(
        'The kind of problem: invalid_type (missing or of another type), too_small, too_big, invalid_format, invalid_value (not one of values), not_multiple_of, unrecognized_keys, invalid_union, custom (a rule of the route, or text with U+0000 or an unpaired surrogate: message says it). Absent on a check the service words itself (e.g. an id unknown in this cabinet).',
      ),
    expected: z.string().optional().describe('invalid_type: the type expected (string, number, object…).'),
    received: z.string().optional().describe('invalid_type: the type sent; undefined when the field is missing.'),
    origin: z
      .string()
      .optional()
      .describe('too_small / too_big: what was measured: number, int, string (its length), array (its items), date.'),
    minimum: z.number().optional().describe('too_small: the least value, length or count.'),
    maximum: z.number().optional().describe('too_big: the greatest value, length or count.'),
    inclusive: z.boolean().optional().describe('too_small / too_big: whether the limit itself is allowed.'),
    format: z.string().optional().describe('invalid_format: email, url, uuid, date, datetime, regex…'),
    pattern: z.string().optional().describe('invalid_format with format regex: the pattern.'),
    values: z.array(primitiveSchema).optional().describe('invalid_value: the values allowed.'),
    divisor: z.number().optional().describe('not_multiple_of: the value must be a multiple of this.'),
    keys: z.array(z.string()).optional().describe('unrecognized_keys: the keys that are not allowed.'),
  })
  .meta({ id: 'ValidationIssue' });
export type ValidationIssue = z.infer<typeof validationIssueSchema>;

export const errorBodySchema = z
  .object({
    error: z.string().describe('A stable code; see the list of codes.'),
    message: z.string().describe('For a person: what went wrong and what to do.'),
    details: z
      .union([z.array(validationIssueSchema), z.unknown()])
      .optional()
      .describe(
        'More about the error: for validation_error, one ValidationIssue per problem; for other codes, what their description names.',
      ),
    request_id: z.string(),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorBodySchema>;
