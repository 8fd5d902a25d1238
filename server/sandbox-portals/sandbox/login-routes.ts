import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { homePage, loginPage, MESSAGES, mfaPage, phonePage } from './pages.js';
import { MFA_CODE_VALIDITY_MS, sameText, type Portal, type Session } from './portal.js';
import { field, type FormBody } from './validation.js';

type LoginReason = 'expiree' | 'essais' | 'code-expire';
const LOGIN_REASONS: Record<LoginReason, string> = {
  expiree: MESSAGES.expired,
  essais: MESSAGES.tooManyTries,
  'code-expire': MESSAGES.codeExpired,
};

/**
 * The portal's door, an encapsulated plugin: login, the SMS code step, logout, the sandbox phone,
 * and the home page (the only one here that needs a logged-in broker: its own child plugin).
 */
export async function loginRoutes(app: FastifyInstance, { portal }: { portal: Portal }): Promise<void> {
  const { base, clock, html, redirect } = portal;

  app.get('/', async (request, reply) => {
    const { session, expired } = portal.currentSession(request);
    if (!session) return redirect(reply, expired ? 'login?raison=expiree' : 'login');
    return redirect(reply, session.stage === 'mfa' ? 'mfa' : 'accueil');
  });

  app.get<{ Querystring: { raison?: string } }>('/login', async (request, reply) => {
    const { session } = portal.currentSession(request);
    if (session?.stage === 'ok') return redirect(reply, 'accueil');
    const reason = request.query.raison;
    const alert = reason !== undefined && Object.hasOwn(LOGIN_REASONS, reason) ? LOGIN_REASONS[reason as LoginReason] : null;
    return html(reply, 200, loginPage(base, alert));
  });

  app.post<{ Body: FormBody | undefined }>('/login', async (request, reply) => {
    const brokerId = field(request.body, 'broker_id');
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const account = portal.accounts.get(brokerId);
    if (!account || !sameText(password, account.password)) return html(reply, 401, loginPage(base, MESSAGES.badCredentials, brokerId));
    const previous = portal.currentSession(request).session;
    if (previous) portal.forgetSession(previous);
    const session = portal.openSession(reply, account, brokerId);
    if (account.mfa) {
      portal.sendSmsCode(session);
      return redirect(reply, 'mfa');
    }
    return redirect(reply, 'accueil');
  });

  /** The session waiting for its SMS code, or undefined after answering with the redirect the visitor needs. */
  function mfaSession(request: FastifyRequest, reply: FastifyReply): Session | undefined {
    const { session, expired } = portal.currentSession(request);
    if (!session) {
      redirect(reply, expired ? 'login?raison=expiree' : 'login');
      return undefined;
    }
    if (session.stage === 'ok' || !session.mfa) {
      redirect(reply, 'accueil');
      return undefined;
    }
    if (clock.now() - session.mfa.sentAt > MFA_CODE_VALIDITY_MS) {
      portal.endSession(reply, session);
      redirect(reply, 'login?raison=code-expire');
      return undefined;
    }
    session.lastSeenAt = clock.now();
    return session;
  }

  app.get('/mfa', async (request, reply) => {
    if (!mfaSession(request, reply)) return reply;
    return html(reply, 200, mfaPage(base, null));
  });

  app.post<{ Body: FormBody | undefined }>('/mfa', async (request, reply) => {
    const session = mfaSession(request, reply);
    if (!session?.mfa) return reply;
    const code = field(request.body, 'code').replace(/\s/g, '');
    if (sameText(code, session.mfa.code)) {
      session.stage = 'ok';
      session.mfa = null;
      return redirect(reply, 'accueil');
    }
    session.mfa.triesLeft -= 1;
    if (session.mfa.triesLeft <= 0) {
      portal.endSession(reply, session);
      return redirect(reply, 'login?raison=essais');
    }
    return html(reply, 401, mfaPage(base, MESSAGES.wrongCode(session.mfa.triesLeft)));
  });

  app.post('/logout', async (request, reply) => {
    portal.endSession(reply, portal.currentSession(request).session);
    return redirect(reply, 'login');
  });

  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', portal.requireSession);
    signedIn.get('/accueil', async (request, reply) => html(reply, 200, homePage(base, portal.sessionOf(request).displayName)));
  });

  // The tester's phone, not the portal's: no login.
  app.get<{ Querystring: { format?: string } }>('/phone', async (request, reply) => {
    if (request.query.format === 'json') {
      return reply
        .header('Cache-Control', 'no-store')
        .send({ messages: portal.messages.map((m) => ({ to: m.to, code: m.code, sent_at: new Date(m.sentAtMs).toISOString() })) });
    }
    return html(reply, 200, phonePage(base, portal.messages));
  });
}
