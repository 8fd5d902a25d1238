import type { FastifyInstance } from 'fastify';
import { applyOutageModes, type SandboxPortalOptions } from '../modes.js';
import { loginRoutes } from './login-routes.js';
import { messagePage, TEXTS } from './pages.js';
import { createTraditionPortal } from './portal.js';
import { quoteRoutes } from './quote-routes.js';
import type { TraditionAccount, TraditionLimits } from './state.js';

/**
 * Mutuelle Tradition, a demo insurer with a legacy extranet: server-rendered pages in frames, a
 * one-use __VIEWSTATE in every form, sessions that expire after 3 idle minutes (the broker's draft
 * quote survives, to be resumed), a captcha at login for some accounts, and a quote PDF that is
 * prepared asynchronously. Register it with a prefix:
 *
 *   await app.register(traditionPortalPlugin, { prefix: '/sandbox/tradition', clock, randomBytes, mode, latencyMs });
 *
 * URL map (relative to the prefix):
 *   GET  /login, POST /login      accounts demo/demo and demo-captcha/demo (a captcha at every login)
 *   GET  /controle, POST /controle, GET /captcha/<id>.png    the captcha; 3 tries
 *   GET  /cadre                   the frameset: /bandeau, /menu and the main frame "principal" (/accueil)
 *   GET  /devis/nouveau/<automobile|habitation|rc_pro>        → a new draft /devis/<n°>
 *   GET  /devis/<n°>, POST /devis/<n°>   the draft's current step (postback), then its quote
 *   GET  /devis/<n°>/pdf          once prepared (after 2 refreshes of the quote page, or 30 s)
 *   GET  /phone[?format=json]     the captchas shown, newest first (no login; not affected by modes)
 * The robot that drives it is the package insurers/tradition/.
 */

export interface TraditionOptions extends SandboxPortalOptions {
  accounts?: ReadonlyMap<string, TraditionAccount>;
  /** When the quote PDF is ready: after this many refreshes of the quote page (2), or this long after pricing (30 s). */
  pdfAfterRefreshes?: number;
  pdfAfterMs?: number;
  /** Sessions, drafts, login forms and captchas kept at most (1000, 2000, 1000, 50). */
  limits?: Partial<TraditionLimits>;
}

const DEMO_ACCOUNTS: ReadonlyMap<string, TraditionAccount> = new Map([
  ['demo', { password: 'demo', captcha: false, displayName: 'Cabinet Démo' }],
  ['demo-captcha', { password: 'demo', captcha: true, displayName: 'Cabinet Démo (contrôle de sécurité)' }],
]);

export async function traditionPortalPlugin(app: FastifyInstance, options: TraditionOptions): Promise<void> {
  const base = app.prefix;
  const portal = createTraditionPortal({
    base,
    clock: options.clock,
    randomBytes: options.randomBytes,
    accounts: options.accounts ?? DEMO_ACCOUNTS,
    redesigned: () => options.mode() === 'changed',
    pdf: { afterRefreshes: options.pdfAfterRefreshes ?? 2, afterMs: options.pdfAfterMs ?? 30_000 },
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const { html } = portal;

  // Forms post application/x-www-form-urlencoded: parsed in this encapsulated context only.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 32 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body.toString())));
  });

  app.addHook('onSend', async (_request, reply) => {
    // Framed by itself only: the frameset and its frames are all this portal's pages.
    reply.header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'",
    );
    reply.header('X-Frame-Options', 'SAMEORIGIN');
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
  });

  applyOutageModes(app, options, {
    exempt: (url) => url === `${base}/phone`,
    unavailable: (reply) =>
      html(
        reply,
        reply.statusCode,
        messagePage(TEXTS.unavailableHeading, 'Le service est momentanément indisponible. Réessayez plus tard.', base),
      ),
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'tradition portal error');
    return html(
      reply,
      status,
      messagePage(status === 500 ? 'Erreur du portail' : 'Requête invalide', 'La demande n’a pas pu aboutir.', base),
    );
  });
  if (base !== '')
    app.setNotFoundHandler((_request, reply) => html(reply, 404, messagePage('Page introuvable', 'Cette page n’existe pas.', base)));

  await app.register(loginRoutes, { portal });
  await app.register(quoteRoutes, { portal });
}
