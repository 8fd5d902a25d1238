import type { FastifyInstance, FastifyReply } from 'fastify';
import { sameText } from '../sandbox/portal.js';
import { phonePage } from './shell.js';
import { APPROVAL_VALIDITY_MS, type HorizonAccount, type HorizonState, type Session } from './state.js';

const SMALL_BODY = 4 * 1024;

/** A JSON error the app shows as it is: a code for programs, a French message for people. */
export function apiError(reply: FastifyReply, status: number, error: string, message: string, extra: Record<string, unknown> = {}) {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .send({ error, message, ...extra });
}

function sessionView(session: Session) {
  return { state: session.stage === 'ok' ? 'connected' : 'approval_required', display_name: session.displayName };
}

/**
 * The session API (login, the approval in the Horizon app, logout) and the tester's phone, which
 * lists the approval requests with an "Approuver" button.
 */
export async function sessionRoutes(
  app: FastifyInstance,
  { state, accounts, base }: { state: HorizonState; accounts: ReadonlyMap<string, HorizonAccount>; base: string },
): Promise<void> {
  app.get('/api/session', async (request, reply) => {
    const session = state.sessionOf(request);
    if (!session) return apiError(reply, 401, 'not_signed_in', 'Connectez-vous.');
    return reply.header('Cache-Control', 'no-store').send(sessionView(session));
  });

  app.post<{ Body: { login?: unknown; password?: unknown } | null }>('/api/session', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    const login = typeof request.body?.login === 'string' ? request.body.login.trim() : '';
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const account = accounts.get(login);
    if (!account || !sameText(password, account.password))
      return apiError(reply, 401, 'invalid_credentials', 'Identifiant ou mot de passe incorrect.');
    state.forgetSession(state.sessionOf(request));
    const session = state.openSession(reply, login, account);
    return reply.header('Cache-Control', 'no-store').send(sessionView(session));
  });

  app.delete('/api/session', async (request, reply) => {
    state.endSession(reply, state.sessionOf(request));
    return reply.code(204).send();
  });

  app.post('/api/session/approval', async (request, reply) => {
    const session = state.sessionOf(request);
    if (!session) return apiError(reply, 401, 'not_signed_in', 'Connectez-vous.');
    if (session.stage === 'ok') return apiError(reply, 409, 'already_approved', 'La connexion est déjà validée.');
    const approval = state.requestApproval(session);
    return reply
      .code(202)
      .header('Cache-Control', 'no-store')
      .send({ status: 'pending', expires_at: new Date(approval.requestedAt + APPROVAL_VALIDITY_MS).toISOString() });
  });

  app.get('/api/session/approval', async (request, reply) => {
    const session = state.sessionOf(request);
    if (!session) return apiError(reply, 401, 'not_signed_in', 'Connectez-vous.');
    const found = state.approvalOf(session);
    const status = session.stage === 'ok' ? 'approved' : (found?.status ?? 'none');
    return reply.header('Cache-Control', 'no-store').send({ status });
  });

  // The tester's phone, not the portal: no login, and modes leave it alone.
  app.get<{ Querystring: { format?: string } }>('/phone', async (request, reply) => {
    const list = state.phoneApprovals();
    if (request.query.format === 'json') {
      return reply.header('Cache-Control', 'no-store').send({
        approvals: list.map(({ approval, status }) => ({
          id: approval.id,
          login: approval.login,
          status,
          requested_at: new Date(approval.requestedAt).toISOString(),
          approve_url: `${base}/phone/approbations/${approval.id}/approuver`,
        })),
      });
    }
    return reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(phonePage(base, list));
  });

  app.post<{ Params: { id: string } }>('/phone/approbations/:id/approuver', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    const approved = state.approve(request.params.id);
    if (request.headers.accept?.includes('application/json')) {
      return approved ? reply.send({ status: 'approved' }) : apiError(reply, 404, 'unknown_request', 'Demande inconnue ou expirée.');
    }
    return reply.redirect(`${base}/phone`, 303);
  });
}
