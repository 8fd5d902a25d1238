import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { lanChangeSchema, type LanStatus } from '../../shared/lan.js';
import { CLI_ACTOR, listAudit, verifyAudit } from '../audit/service.js';
import { AUDIT_ACTIONS, type AuditAction } from '../../shared/audit.js';
import { UsageError } from '../errors.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';
import { caCertificate } from '../lan/office-ca.js';
import { changeLan, lanStatus, systemNetwork } from '../lan/service.js';
import { parse, print, ReportedFailure, required, withDeps, withFlagHints, type CliIo } from './common.js';

function describe(status: LanStatus): string {
  if (!status.allowed) return 'Office LAN mode is forbidden by the IT policy of this machine.';
  if (!status.enabled) return `Office LAN mode is off${status.managed_by_policy ? ' (set by the IT policy)' : ''}.`;
  const lines = [
    `Office LAN mode is on${status.managed_by_policy ? ' (set by the IT policy)' : ''}. Colleagues open:`,
    ...status.urls.map((url) => `  ${url}/console/`),
  ];
  if (status.ca_fingerprint_sha256)
    lines.push(`Office CA fingerprint (SHA-256), to compare on each broker's machine:`, `  ${status.ca_fingerprint_sha256}`);
  if (status.certificate)
    lines.push(
      `Certificate (${status.certificate.source}) for ${[...status.certificate.names, ...status.certificate.addresses].join(', ')}, valid until ${status.certificate.not_after}.`,
    );
  for (const problem of status.problems) lines.push(`Problem: ${problem}`);
  lines.push('The running service applies changes within a few seconds, without a restart.');
  return lines.join('\n');
}

/** `courtier lan enable|disable|status|ca`: the office LAN mode, from the machine itself. */
export async function runLan(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const network = io.network ?? systemNetwork;
  switch (sub) {
    case 'enable': {
      const v = parse(rest, {
        address: { type: 'string', multiple: true },
        port: { type: 'string' },
        name: { type: 'string', multiple: true },
        cert: { type: 'string' },
        key: { type: 'string' },
        'new-ca': { type: 'boolean', default: false },
      });
      const parsed = lanChangeSchema.safeParse({
        enabled: true,
        addresses: v.address,
        port: v.port === undefined ? undefined : Number(v.port),
        names: v.name,
      });
      if (!parsed.success) throw validationError(toValidationIssues(parsed.error, undefined));
      const status = await withFlagHints(
        () =>
          withDeps(v['data-dir'], io, (deps) =>
            changeLan(
              deps,
              // Absolute: the service that reads them runs from another directory.
              {
                ...parsed.data,
                certificateFile: v.cert === undefined ? undefined : resolve(v.cert),
                keyFile: v.key === undefined ? undefined : resolve(v.key),
                newAuthority: v['new-ca'],
              },
              network,
              CLI_ACTOR,
            ),
          ),
        { lan_name_outside_ca: 'Run it again with --new-ca to make one.' },
      );
      print(io, v.json, status, describe(status));
      return;
    }
    case 'disable': {
      const v = parse(rest, {});
      const status = await withDeps(v['data-dir'], io, (deps) => changeLan(deps, { enabled: false }, network, CLI_ACTOR));
      print(io, v.json, status, describe(status));
      return;
    }
    case 'status': {
      const v = parse(rest, {});
      const status = await withDeps(v['data-dir'], io, (deps) => lanStatus(deps, network));
      print(io, v.json, status, describe(status));
      return;
    }
    case 'ca': {
      const v = parse(rest, { out: { type: 'string' } });
      const pem = await withDeps(v['data-dir'], io, (deps) => caCertificate(deps));
      if (pem === null) throw new UsageError('office LAN mode was never enabled here: there is no CA yet (run `courtier lan enable`)');
      if (v.out === undefined) io.stdout(pem);
      else {
        writeFileSync(v.out, pem, { mode: 0o644 });
        print(io, v.json, { written: v.out }, `The office CA certificate is in ${v.out}.`);
      }
      return;
    }
    default:
      throw new UsageError(`unknown lan command "${sub ?? ''}"; use enable, disable, status or ca`);
  }
}

/** `courtier audit list --cabinet ID [--since ISO] [--action A] [--limit N]`: newest first. */
export async function runAudit(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'verify') {
    const v = parse(rest, {});
    const result = await withDeps(v['data-dir'], io, (deps) => verifyAudit(deps));
    const purged = result.purged > 0 ? ` (${result.purged} older entries removed by the one-year retention)` : '';
    const human = result.ok
      ? `The audit log is intact: ${result.checked} entries checked${purged}.${result.head ? ` Newest seal: ${result.head} (note it: a log rewritten whole would end on another).` : ''}`
      : `The audit log was tampered with: the entry ${result.broken?.id} (${result.broken?.at}, ${result.broken?.action}) does not follow the one before it, after ${result.checked} intact entries. An entry was changed, removed or inserted there.`;
    print(io, v.json, result, human);
    if (!result.ok) throw new ReportedFailure(`the audit log's chain breaks at entry ${result.broken?.id}`);
    return;
  }
  if (sub !== 'list') throw new UsageError(`unknown audit command "${sub ?? ''}"; use list or verify`);
  const v = parse(rest, { cabinet: { type: 'string' }, since: { type: 'string' }, action: { type: 'string' }, limit: { type: 'string' } });
  const cabinetId = required(v, 'cabinet');
  const since = v.since === undefined ? undefined : Date.parse(v.since);
  if (since !== undefined && Number.isNaN(since))
    throw new UsageError('--since must be an ISO date such as 2026-11-01 or 2026-11-01T08:00:00Z');
  if (v.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(v.action))
    throw new UsageError(`--action must be one of ${AUDIT_ACTIONS.join(', ')}`);
  const limit = v.limit === undefined ? 100 : Number(v.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  const entries = await withDeps(v['data-dir'], io, (deps) =>
    listAudit(deps, cabinetId, { since, action: v.action as AuditAction | undefined, limit }),
  );
  const lines = entries.map(
    (e) =>
      `${e.at}  ${e.action}${e.result === 'failure' ? ' (failed)' : ''}  ${e.actor.label ?? e.actor.kind}${e.address ? ` from ${e.address}` : ''} [${e.listener}]${e.target ? `  ${e.target}` : ''}`,
  );
  print(io, v.json, { data: entries }, lines.length > 0 ? lines.join('\n') : 'No audit entries.');
}
