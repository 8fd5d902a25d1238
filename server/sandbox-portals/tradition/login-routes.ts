import type { FastifyInstance } from 'fastify';
import { sameText } from '../sandbox/portal.js';
import { field, type FormBody } from '../sandbox/validation.js';
import { captchaPng } from './captcha.js';
import { bannerPage, captchaPage, framesetPage, homePage, loginPage, menuPage, messagePage, phonePage, TEXTS } from './pages.js';
import type { TraditionPortal } from './portal.js';
import { CAPTCHA_TRIES } from './state.js';

const LOGIN_REASONS: Readonly<Record<string, string>> = { expiration: TEXTS.expired, essais: TEXTS.tooManyTries };

/**
 * The door and the frames: login (a captcha for the accounts that have one), the frameset, its
 * banner, menu and home page, the tester's phone.
 */
export async function loginRoutes(app: FastifyInstance, { portal }: { portal: TraditionPortal }): Promise<void> {
  const { base, html, redirect, state } = portal;
  const invalid = (reply: Parameters<TraditionPortal['html']>[0]) =>
    html(reply, 400, messagePage(TEXTS.invalidHeading, 'Le formulaire envoyé n’est plus valide.', base));

  app.get('/', async (request, reply) => {
    const { session, expired } = state.currentSession(request);
    if (!session) return redirect(reply, expired ? 'login?motif=expiration' : 'login');
    return redirect(reply, session.stage === 'captcha' ? 'controle' : 'cadre');
  });

  app.get<{ Querystring: { motif?: string } }>('/login', async (request, reply) => {
    const motif = request.query.motif ?? '';
    const alert = Object.hasOwn(LOGIN_REASONS, motif) ? (LOGIN_REASONS[motif] ?? null) : null;
    return html(reply, 200, loginPage(base, state.loginViewState(), alert));
  });

  app.post<{ Body: FormBody | undefined }>('/login', async (request, reply) => {
    if (!state.consumeLoginViewState(request.body?.__VIEWSTATE)) return invalid(reply);
    const login = field(request.body, 'CODE_PART');
    const password = typeof request.body?.MDP === 'string' ? request.body.MDP : '';
    const account = portal.accounts.get(login);
    if (!account || !sameText(password, account.password))
      return html(reply, 401, loginPage(base, state.loginViewState(), TEXTS.badCredentials, login));
    state.endSession(reply, state.currentSession(request).session);
    const session = state.openSession(reply, login, account);
    if (!account.captcha) return redirect(reply, 'cadre');
    state.newCaptcha(session, CAPTCHA_TRIES);
    return redirect(reply, 'controle');
  });

  app.get('/controle', async (request, reply) => {
    const { session } = state.currentSession(request);
    if (!session?.captcha || session.stage !== 'captcha') return redirect(reply, 'login');
    return html(reply, 200, captchaPage(base, session.captcha.id, state.captchaViewState(session), null));
  });

  app.get<{ Params: { file: string } }>('/captcha/:file', async (request, reply) => {
    const { session } = state.currentSession(request);
    if (!session?.captcha || request.params.file !== `${session.captcha.id}.png`) return reply.code(404).send();
    return reply.type('image/png').header('Cache-Control', 'no-store').send(captchaPng(session.captcha.text, portal.randomBytes));
  });

  app.post<{ Body: FormBody | undefined }>('/controle', async (request, reply) => {
    const { session } = state.currentSession(request);
    if (!session?.captcha || session.stage !== 'captcha') return redirect(reply, 'login?motif=expiration');
    if (!state.consumeCaptchaViewState(session, request.body?.__VIEWSTATE)) return invalid(reply);
    if (field(request.body, 'CODE_SECU').toUpperCase() === session.captcha.text) {
      session.stage = 'ok';
      session.captcha = null;
      return redirect(reply, 'cadre');
    }
    const left = session.captcha.triesLeft - 1;
    if (left <= 0) {
      state.endSession(reply, session);
      return redirect(reply, 'login?motif=essais');
    }
    state.newCaptcha(session, left);
    return html(reply, 401, captchaPage(base, session.captcha.id, state.captchaViewState(session), TEXTS.wrongCaptcha(left)));
  });

  app.post('/logout', async (request, reply) => {
    state.endSession(reply, state.currentSession(request).session);
    return redirect(reply, 'login');
  });

  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', portal.requireSession);
    signedIn.get('/cadre', async (_request, reply) => html(reply, 200, framesetPage(base)));
    signedIn.get('/bandeau', async (request, reply) => html(reply, 200, bannerPage(base, portal.sessionOf(request).displayName)));
    signedIn.get('/menu', async (_request, reply) => html(reply, 200, menuPage(base)));
    signedIn.get('/accueil', async (request, reply) => {
      const session = portal.sessionOf(request);
      return html(reply, 200, homePage(base, session.displayName, state.latestOpenDraft(session.user)?.no ?? null));
    });
  });

  // The tester's phone, not the portal: no login, not affected by the modes.
  app.get<{ Querystring: { format?: string } }>('/phone', async (request, reply) => {
    const captchas = state.captchasShown();
    if (request.query.format === 'json') {
      return reply.header('Cache-Control', 'no-store').send({
        captchas: captchas.map((c) => ({ text: c.text, shown_at: new Date(c.shownAtMs).toISOString() })),
        messages: [],
      });
    }
    return html(reply, 200, phonePage(captchas));
  });
}
