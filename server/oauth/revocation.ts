import { revocationRequest } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { readForm, sha256 } from './common.js';
import * as store from './store.js';

/**
 * RFC 7009: the answer is the same whether the token was known or not. A refresh token stands for
 * its grant, so revoking it revokes the grant and the access tokens issued under it.
 */
export function revokeToken(deps: Deps, form: Record<string, unknown>): void {
  const { token: presented, client_id: clientId } = readForm(revocationRequest, form);
  const token = store.findToken(deps.db.orm, sha256(presented));
  if (!token) return;
  const grant = store.findGrant(deps.db.orm, token.grantId);
  if (!grant || (clientId !== undefined && grant.clientId !== clientId)) return;
  const now = deps.clock.now();
  deps.db.immediateTransaction(() => {
    if (token.kind === 'refresh') store.revokeGrant(deps.db.orm, grant.id, now);
    else store.revokeToken(deps.db.orm, token.id, now);
  });
}
