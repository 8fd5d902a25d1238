import type { FastifyInstance, FastifyReply } from 'fastify';
import { applyOutageModes, type SandboxPortalOptions } from '../modes.js';
import { APP_SCRIPT } from './app-script.js';
import { quoteRoutes } from './quote-routes.js';
import { apiError, sessionRoutes } from './session-routes.js';
import { APP_CSS, outagePage, shellPage } from './shell.js';
import { createHorizonState, type HorizonAccount } from './state.js';

/**
 * Horizon Direct, a direct insurer whose broker portal is a single-page app on a JSON API: the
 * server sends one HTML shell and one script (app.js), which draws every screen from the API and
 * moves between them with history.pushState. Register it with a prefix:
 *
 *   await app.register(horizonPortalPlugin, { prefix: '/sandbox/horizon', clock, randomBytes, mode, latencyMs });
 *
 * URL map (relative to the prefix):
 *   GET  /, /app, /app/*                 the shell (the app reads the address: /app/connexion, /app/validation,
 *                                        /app/accueil, /app/devis/{id}/{step}, …/formule, …/documents)
 *   GET  /app.js, /app.css
 *   GET|POST|DELETE /api/session         the session: {login, password}; accounts demo/demo and demo-app/demo
 *   POST|GET /api/session/approval       push an approval to the phone (demo-app), then poll it (valid 2 minutes)
 *   POST /api/quotes {product}           voiture | logement: the quote and its steps' fields
 *   GET  /api/quotes/{id}
 *   POST /api/quotes/{id}/steps          {step, answers}: 422 with {errors: {field: message}}; after the last
 *                                        step the offers, then {step: 'formule', answers: {formule}}
 *   GET  /api/quotes/{id}/documents[/{devis|conditions-generales|ipid}]
 *   GET  /phone[?format=json], POST /phone/approbations/{id}/approuver   the tester's phone (no login, no modes)
 */

export interface HorizonOptions extends SandboxPortalOptions {
  /** The broker accounts, by login; demo/demo and demo-app/demo when not given. */
  accounts?: ReadonlyMap<string, HorizonAccount>;
}

const DEMO_ACCOUNTS: ReadonlyMap<string, HorizonAccount> = new Map([
  ['demo', { password: 'demo', appApproval: false, displayName: 'Cabinet Démo' }],
  ['demo-app', { password: 'demo', appApproval: true, displayName: 'Cabinet Démo (validation dans l’app)' }],
]);

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export async function horizonPortalPlugin(app: FastifyInstance, options: HorizonOptions): Promise<void> {
  const base = app.prefix;
  const state = createHorizonState({ base, clock: options.clock, randomBytes: options.randomBytes });
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(body);

  // The phone's "Approuver" is a plain form post: its body is not read.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, _body, done) =>
    done(null, {}),
  );
  app.addHook('onSend', async (_request, reply) => {
    reply.header('Content-Security-Policy', CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
  });
  const isApi = (url: string) => url.startsWith(`${base}/api/`);
  applyOutageModes(app, options, {
    exempt: (url) => url !== undefined && url.startsWith(`${base}/phone`),
    unavailable: (reply) =>
      isApi(reply.request.url)
        ? apiError(reply, 503, 'unavailable', 'Service momentanément indisponible.')
        : html(reply, 503, outagePage(base)),
  });
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'horizon portal error');
    return apiError(
      reply,
      status,
      status === 500 ? 'portal_error' : 'bad_request',
      status === 500 ? 'Erreur du portail.' : 'Requête invalide.',
    );
  });
  if (base !== '') app.setNotFoundHandler((_request, reply) => apiError(reply, 404, 'not_found', 'Page introuvable.'));

  const shell = async (_request: unknown, reply: FastifyReply) => html(reply, 200, shellPage(base));
  app.get('/', async (_request, reply) => reply.redirect(`${base}/app/accueil`, 303));
  app.get('/app', shell);
  app.get('/app/*', shell);
  app.get('/app.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(APP_SCRIPT),
  );
  app.get('/app.css', async (_request, reply) => reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache').send(APP_CSS));

  await app.register(sessionRoutes, { state, accounts: options.accounts ?? DEMO_ACCOUNTS, base });
  await app.register(quoteRoutes, { state, base, redesigned: () => options.mode() === 'changed' });
}
