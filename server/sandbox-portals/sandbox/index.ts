import type { FastifyInstance } from 'fastify';
import { applyOutageModes, type SandboxPortalOptions } from '../modes.js';
import { attestationRoutes } from './attestation-routes.js';
import { loginRoutes } from './login-routes.js';
import { notFoundPage, unavailablePage } from './pages.js';
import { createPortal, type SandboxAccount } from './portal.js';
import { quoteRoutes } from './quote-routes.js';

/**
 * The sandbox insurer portal: a small extranet that behaves like a real insurer's (login, SMS
 * code, multi-step forms with server-side validation, a results page, PDF downloads, outages),
 * so that robots, demos and tests have something real to drive. Register it with a prefix:
 *
 *   await app.register(sandboxPortalPlugin, { prefix: '/sandbox/insurer', clock, randomBytes, mode, latencyMs });
 *
 * URL map (relative to the prefix):
 *   GET  /                          → 303 to login or accueil
 *   GET  /login, POST /login        accounts demo/demo and demo-mfa/demo (SMS code at every login)
 *   GET  /mfa, POST /mfa            the code sent to the sandbox phone; 3 tries, valid 5 minutes
 *   POST /logout
 *   GET  /accueil
 *   GET  /devis/auto                → a fresh auto quote: /devis/auto/conducteur, /vehicule, /formule (GET and POST)
 *   GET  /devis/habitation          → a fresh home quote: /devis/habitation/logement, /occupation (GET and POST)
 *   GET  /devis/:id, GET /devis/:id/pdf
 *   GET  /attestation, POST /attestation, GET /attestation/:policy, GET /attestation/:policy/pdf
 *   GET  /phone[?format=json]       the SMS the portal sent, newest first (no login; not affected by modes)
 *
 * Every piece of state lives in this plugin instance: two registrations share nothing. portal.ts
 * holds the sessions and what pages share (the session check, a preHandler hook); login-routes.ts,
 * quote-routes.ts and attestation-routes.ts are the pages, each an encapsulated sub-plugin.
 * This is the insurer's side; the robot that drives it is the package insurers/sandbox/.
 */

export interface SandboxOptions extends SandboxPortalOptions {
  /** The broker accounts, by login; demo/demo and demo-mfa/demo when not given. */
  accounts?: ReadonlyMap<string, SandboxAccount>;
}

const DEMO_ACCOUNTS: ReadonlyMap<string, SandboxAccount> = new Map([
  ['demo', { password: 'demo', mfa: false, displayName: 'Cabinet Démo' }],
  ['demo-mfa', { password: 'demo', mfa: true, displayName: 'Cabinet Démo (double authentification)' }],
]);

export async function sandboxPortalPlugin(app: FastifyInstance, options: SandboxOptions): Promise<void> {
  const base = app.prefix;
  const portal = createPortal({
    base,
    clock: options.clock,
    randomBytes: options.randomBytes,
    accounts: options.accounts ?? DEMO_ACCOUNTS,
    redesigned: () => options.mode() === 'changed',
  });
  const { html } = portal;

  // Forms post application/x-www-form-urlencoded: parsed here only (this context is encapsulated,
  // so the rest of the service keeps its JSON-only parsers).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body.toString())));
  });

  app.addHook('onSend', async (_request, reply) => {
    reply.header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
  });

  // Outages. The phone is the tester's device, not the portal: modes leave it alone.
  applyOutageModes(app, options, {
    exempt: (url) => url === `${base}/phone`,
    unavailable: (reply) => html(reply, 503, unavailablePage(base)),
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'sandbox portal error');
    return html(reply, status, notFoundPage(base, false, status === 500 ? 'Erreur du portail' : 'Requête invalide'));
  });
  if (base !== '') app.setNotFoundHandler((_request, reply) => html(reply, 404, notFoundPage(base, false)));

  // Each group of pages is an encapsulated plugin, inheriting the hooks, parser and handlers above;
  // those that need a logged-in broker add the session check once, as their preHandler.
  await app.register(loginRoutes, { portal });
  await app.register(quoteRoutes, { portal });
  await app.register(attestationRoutes, { portal });
}
