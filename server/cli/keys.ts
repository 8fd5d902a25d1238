import { z } from 'zod';
import { createApiKeySchema, type ApiKeySummary } from '../../shared/api-keys.js';
import { createApiKey, listApiKeys, revokeApiKeyById } from '../api-keys/service.js';
import { CLI_ACTOR, recordAudit } from '../audit/service.js';
import { UsageError } from '../errors.js';
import { parse, print, required, withDeps, type CliIo } from './common.js';

function describeKey(key: ApiKeySummary): string {
  const state = key.revoked_at ? `revoked ${key.revoked_at}` : key.expires_at ? `expires ${key.expires_at}` : 'active';
  return `${key.key_id}  ${key.key_prefix}…  ${key.environment}  ${key.name}  [${key.scopes.join(',')}]  ${state}`;
}

/** `courtier keys create|list|revoke`: the cabinet's API keys, made and revoked by whoever holds the data dir. */
export async function runKeys(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create': {
      const v = parse(rest, {
        cabinet: { type: 'string' },
        name: { type: 'string' },
        env: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
        'ip-allowlist': { type: 'string' },
      });
      const list = (s: string | undefined) =>
        s
          ?.split(',')
          .map((x) => x.trim())
          .filter(Boolean);
      const input = createApiKeySchema.safeParse({
        name: required(v, 'name'),
        environment: required(v, 'env'),
        scopes: list(required(v, 'scopes')),
        ip_allowlist: list(v['ip-allowlist']),
        expires_at: v['expires-at'],
      });
      if (!input.success) {
        const flag: Record<string, string> = { environment: 'env', ip_allowlist: 'ip-allowlist', expires_at: 'expires-at' };
        throw new UsageError(input.error.issues.map((i) => `--${flag[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('; '));
      }
      const cabinet = required(v, 'cabinet');
      const key = await withDeps(v['data-dir'], io, (deps) => {
        const created = createApiKey(deps, cabinet, input.data);
        recordAudit(deps, {
          cabinetId: cabinet,
          action: 'api_key.created',
          actor: CLI_ACTOR,
          target: created.key_id,
          details: { name: created.name, environment: created.environment, scopes: created.scopes },
        });
        return created;
      });
      print(
        io,
        v.json,
        key,
        `API key ${key.key_id} created (${key.environment}, scopes ${key.scopes.join(',')}).\n` +
          `Store it now: it is shown only this once.\n\n  ${key.key}\n`,
      );
      return;
    }
    case 'list': {
      const v = parse(rest, { cabinet: { type: 'string' } });
      const cabinet = required(v, 'cabinet');
      const keys = await withDeps(v['data-dir'], io, (deps) => listApiKeys(deps, cabinet));
      print(io, v.json, { keys }, keys.length ? keys.map(describeKey).join('\n') : 'No API keys in this cabinet.');
      return;
    }
    case 'revoke': {
      const v = parse(rest, { 'key-id': { type: 'string' } });
      const keyId = required(v, 'key-id');
      if (!z.uuid().safeParse(keyId).success) throw new UsageError('--key-id must be a key id (a UUID), not the key itself');
      const key = await withDeps(v['data-dir'], io, (deps) => {
        const revoked = revokeApiKeyById(deps, keyId);
        recordAudit(deps, {
          cabinetId: revoked.cabinet_id,
          action: 'api_key.revoked',
          actor: CLI_ACTOR,
          target: revoked.key_id,
          details: { name: revoked.name },
        });
        return revoked;
      });
      print(io, v.json, key, `API key ${key.key_id} revoked.`);
      return;
    }
    default:
      throw new UsageError(`unknown keys command "${sub ?? ''}"; use create, list or revoke`);
  }
}
