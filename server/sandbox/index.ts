import { timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  attestationFormPage,
  attestationPage,
  driverStepPage,
  dwellingStepPage,
  formulaStepPage,
  homePage,
  loginPage,
  MESSAGES,
  mfaPage,
  notFoundPage,
  occupationStepPage,
  phonePage,
  resultPage,
  unavailablePage,
  vehicleStepPage,
  type QuoteView,
  type SmsView,
} from './pages.js';
import { attestationPdf, quotePdf } from './pdf.js';
import { autoPremium, DWELLING_LABELS, FORMULA_LABELS, formatEuros, formatFrenchDate, homePremium, OCCUPANT_LABELS, USAGE_LABELS } from './pricing.js';
import {
  checkDriver,
  checkDwelling,
  checkFormula,
  checkOccupation,
  checkVehicle,
  field,
  POLICY_PATTERN,
  type DriverStep,
  type DwellingStep,
  type FormBody,
  type VehicleStep,
} from './validation.js';

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
 * Every piece of state lives in this plugin instance: two registrations share nothing.
 */

export type SandboxMode = 'normal' | 'slow' | 'flaky' | 'down';

export interface SandboxOptions {
  clock: { now(): number };
  randomBytes: (size: number) => Buffer;
  /** Read on every request: 'down' answers 503 everywhere, 'flaky' every third request, 'slow' waits latencyMs(). */
  mode: () => SandboxMode;
  latencyMs: () => number;
  /** The broker accounts, by login; demo/demo and demo-mfa/demo when not given. */
  accounts?: ReadonlyMap<string, SandboxAccount>;
}

export const SANDBOX_PHONE_NUMBER = '+33 6 12 34 56 42';
export const SESSION_IDLE_MS = 15 * 60_000;
export const MFA_CODE_VALIDITY_MS = 5 * 60_000;
export const MFA_MAX_TRIES = 3;
const SESSION_COOKIE = 'sbx_session';
/** Sessions idle this long are forgotten (until then, a request on them says "expired"). */
const SESSION_PURGE_MS = 24 * 60 * 60_000;
const MAX_MESSAGES = 50;
/** Quotes kept for their results page and PDF; the oldest go first (a long-running demo server). */
const MAX_QUOTES = 5_000;

export interface SandboxAccount {
  password: string;
  /** An SMS code at every login. */
  mfa: boolean;
  displayName: string;
}

export const DEMO_ACCOUNTS: ReadonlyMap<string, SandboxAccount> = new Map([
  ['demo', { password: 'demo', mfa: false, displayName: 'Cabinet Démo' }],
  ['demo-mfa', { password: 'demo', mfa: true, displayName: 'Cabinet Démo (double authentification)' }],
]);

interface Session {
  id: string;
  user: string;
  displayName: string;
  stage: 'mfa' | 'ok';
  lastSeenAt: number;
  mfa: { code: string; sentAt: number; triesLeft: number } | null;
  auto: { driver?: DriverStep; driverRaw?: Record<string, string>; vehicle?: VehicleStep; vehicleRaw?: Record<string, string> };
  home: { dwelling?: DwellingStep; dwellingRaw?: Record<string, string> };
}

interface Quote extends QuoteView {
  owner: string;
  productShort: string;
  createdAtMs: number;
  details: string[];
}

type LoginReason = 'expiree' | 'essais' | 'code-expire';
const LOGIN_REASONS: Record<LoginReason, string> = { expiree: MESSAGES.expired, essais: MESSAGES.tooManyTries, 'code-expire': MESSAGES.codeExpired };

function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(html);
}

export async function sandboxPortalPlugin(app: FastifyInstance, options: SandboxOptions): Promise<void> {
  const { clock, randomBytes } = options;
  const accounts = options.accounts ?? DEMO_ACCOUNTS;
  const base = app.prefix;
  const cookiePath = base === '' ? '/' : base;
  const sessions = new Map<string, Session>();
  const quotes = new Map<string, Quote>();
  const messages: SmsView[] = [];
  let requestsInFlakyMode = 0;

  // Forms post application/x-www-form-urlencoded: parsed here only (this context is encapsulated,
  // so the rest of the service keeps its JSON-only parsers).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body.toString())));
  });

  app.addHook('onSend', async (_request, reply) => {
    reply.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
  });

  // Outages. The phone is the tester's device, not the portal: modes leave it alone.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url === `${base}/phone`) return;
    const mode = options.mode();
    if (mode === 'down') return sendHtml(reply.header('Retry-After', '60'), 503, unavailablePage(base));
    if (mode === 'flaky') {
      requestsInFlakyMode += 1;
      if (requestsInFlakyMode % 3 === 0) return sendHtml(reply.header('Retry-After', '5'), 503, unavailablePage(base));
    }
    if (mode === 'slow') await sleep(Math.max(0, options.latencyMs()));
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'sandbox portal error');
    return sendHtml(reply, status, notFoundPage(base, false, status === 500 ? 'Erreur du portail' : 'Requête invalide'));
  });
  if (base !== '') app.setNotFoundHandler((_request, reply) => sendHtml(reply, 404, notFoundPage(base, false)));

  // ---- Sessions --------------------------------------------------------------------------------

  function redirect(reply: FastifyReply, path: string): FastifyReply {
    return reply.redirect(`${base}/${path}`, 303);
  }

  function setSessionCookie(reply: FastifyReply, id: string): void {
    reply.header('Set-Cookie', `${SESSION_COOKIE}=${id}; Path=${cookiePath}; HttpOnly; SameSite=Lax`);
  }

  function clearSessionCookie(reply: FastifyReply): void {
    reply.header('Set-Cookie', `${SESSION_COOKIE}=; Path=${cookiePath}; HttpOnly; SameSite=Lax; Max-Age=0`);
  }

  /** The request's session; an idle one is dropped and reported as expired. */
  function currentSession(request: FastifyRequest): { session?: Session; expired: boolean } {
    const id = readCookie(request, SESSION_COOKIE);
    const session = id === undefined ? undefined : sessions.get(id);
    if (!session) return { expired: false };
    if (clock.now() - session.lastSeenAt > SESSION_IDLE_MS) {
      sessions.delete(session.id);
      return { expired: true };
    }
    return { session, expired: false };
  }

  /** The logged-in session, or undefined after answering with the redirect the visitor needs. */
  function loggedIn(request: FastifyRequest, reply: FastifyReply): Session | undefined {
    const { session, expired } = currentSession(request);
    if (!session) {
      if (expired) clearSessionCookie(reply);
      redirect(reply, expired ? 'login?raison=expiree' : 'login');
      return undefined;
    }
    if (session.stage === 'mfa') {
      redirect(reply, 'mfa');
      return undefined;
    }
    session.lastSeenAt = clock.now();
    return session;
  }

  function openSession(account: SandboxAccount, user: string): Session {
    const now = clock.now();
    for (const [id, s] of sessions) if (now - s.lastSeenAt > SESSION_PURGE_MS) sessions.delete(id);
    const session: Session = {
      id: randomBytes(24).toString('base64url'),
      user,
      displayName: account.displayName,
      stage: account.mfa ? 'mfa' : 'ok',
      lastSeenAt: now,
      mfa: null,
      auto: {},
      home: {},
    };
    sessions.set(session.id, session);
    return session;
  }

  function sendSmsCode(session: Session): void {
    const code = String(randomBytes(4).readUInt32BE(0) % 1_000_000).padStart(6, '0');
    const sentAt = clock.now();
    session.mfa = { code, sentAt, triesLeft: MFA_MAX_TRIES };
    messages.unshift({ to: SANDBOX_PHONE_NUMBER, code, sentAtMs: sentAt });
    messages.length = Math.min(messages.length, MAX_MESSAGES);
  }

  // ---- Login, MFA, logout ------------------------------------------------------------------------

  app.get('/', async (request, reply) => {
    const { session, expired } = currentSession(request);
    if (!session) return redirect(reply, expired ? 'login?raison=expiree' : 'login');
    return redirect(reply, session.stage === 'mfa' ? 'mfa' : 'accueil');
  });

  app.get<{ Querystring: { raison?: string } }>('/login', async (request, reply) => {
    const { session } = currentSession(request);
    if (session?.stage === 'ok') return redirect(reply, 'accueil');
    const reason = request.query.raison;
    const alert = reason !== undefined && Object.hasOwn(LOGIN_REASONS, reason) ? LOGIN_REASONS[reason as LoginReason] : null;
    return sendHtml(reply, 200, loginPage(base, alert));
  });

  app.post<{ Body: FormBody | undefined }>('/login', async (request, reply) => {
    const brokerId = field(request.body, 'broker_id');
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const account = accounts.get(brokerId);
    if (!account || !sameText(password, account.password)) return sendHtml(reply, 401, loginPage(base, MESSAGES.badCredentials, brokerId));
    const previous = currentSession(request).session;
    if (previous) sessions.delete(previous.id);
    const session = openSession(account, brokerId);
    setSessionCookie(reply, session.id);
    if (account.mfa) {
      sendSmsCode(session);
      return redirect(reply, 'mfa');
    }
    return redirect(reply, 'accueil');
  });

  function mfaSession(request: FastifyRequest, reply: FastifyReply): Session | undefined {
    const { session, expired } = currentSession(request);
    if (!session) {
      redirect(reply, expired ? 'login?raison=expiree' : 'login');
      return undefined;
    }
    if (session.stage === 'ok' || !session.mfa) {
      redirect(reply, 'accueil');
      return undefined;
    }
    if (clock.now() - session.mfa.sentAt > MFA_CODE_VALIDITY_MS) {
      sessions.delete(session.id);
      clearSessionCookie(reply);
      redirect(reply, 'login?raison=code-expire');
      return undefined;
    }
    session.lastSeenAt = clock.now();
    return session;
  }

  app.get('/mfa', async (request, reply) => {
    if (!mfaSession(request, reply)) return reply;
    return sendHtml(reply, 200, mfaPage(base, null));
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
      sessions.delete(session.id);
      clearSessionCookie(reply);
      return redirect(reply, 'login?raison=essais');
    }
    return sendHtml(reply, 401, mfaPage(base, MESSAGES.wrongCode(session.mfa.triesLeft)));
  });

  app.post('/logout', async (request, reply) => {
    const { session } = currentSession(request);
    if (session) sessions.delete(session.id);
    clearSessionCookie(reply);
    return redirect(reply, 'login');
  });

  app.get('/accueil', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    return sendHtml(reply, 200, homePage(base, session.displayName));
  });

  // ---- Auto quote ------------------------------------------------------------------------------

  app.get('/devis/auto', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    session.auto = {};
    return redirect(reply, 'devis/auto/conducteur');
  });

  app.get('/devis/auto/conducteur', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    return sendHtml(reply, 200, driverStepPage(base, session.auto.driverRaw ?? {}));
  });

  app.post<{ Body: FormBody | undefined }>('/devis/auto/conducteur', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const checked = checkDriver(request.body, clock.now());
    if (!checked.ok) return sendHtml(reply, 422, driverStepPage(base, checked.raw, checked.errors, checked.invalid));
    session.auto.driver = checked.value;
    session.auto.driverRaw = checked.raw;
    return redirect(reply, 'devis/auto/vehicule');
  });

  app.get('/devis/auto/vehicule', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    return sendHtml(reply, 200, vehicleStepPage(base, session.auto.vehicleRaw ?? {}));
  });

  app.post<{ Body: FormBody | undefined }>('/devis/auto/vehicule', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    const checked = checkVehicle(request.body, clock.now());
    if (!checked.ok) return sendHtml(reply, 422, vehicleStepPage(base, checked.raw, checked.errors, checked.invalid));
    session.auto.vehicle = checked.value;
    session.auto.vehicleRaw = checked.raw;
    return redirect(reply, 'devis/auto/formule');
  });

  app.get('/devis/auto/formule', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    if (!session.auto.vehicle) return redirect(reply, 'devis/auto/vehicule');
    return sendHtml(reply, 200, formulaStepPage(base, {}));
  });

  app.post<{ Body: FormBody | undefined }>('/devis/auto/formule', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const { driver, vehicle } = session.auto;
    if (!driver) return redirect(reply, 'devis/auto/conducteur');
    if (!vehicle) return redirect(reply, 'devis/auto/vehicule');
    const checked = checkFormula(request.body);
    if (!checked.ok) return sendHtml(reply, 422, formulaStepPage(base, checked.raw, checked.errors, checked.invalid));
    const now = clock.now();
    const premiumEur = autoPremium(
      { driverBirthDate: driver.birthDate, licenceDate: driver.licenceDate, bonusMalus: driver.bonusMalus, postcode: driver.postcode, usage: vehicle.usage, formula: checked.value.formula },
      now,
    );
    const vehicleName = [vehicle.make, vehicle.model].filter(Boolean).join(' ');
    const quote = saveQuote(session, {
      productLabel: 'Assurance auto',
      productShort: 'auto',
      insuredName: driver.insuredName,
      premiumEur,
      formulaLabel: FORMULA_LABELS[checked.value.formula],
      pieces: 'Relevé d’information',
      details: [
        `Conducteur né le ${formatFrenchDate(driver.birthDate)}, permis obtenu le ${formatFrenchDate(driver.licenceDate)}`,
        `Coefficient bonus-malus : ${driver.bonusMalus.toFixed(2).replace('.', ',')}`,
        `Véhicule : ${[vehicleName, vehicle.registration].filter(Boolean).join(' – ')}, mis en circulation le ${formatFrenchDate(vehicle.firstRegistrationDate)}`,
        `Usage : ${USAGE_LABELS[vehicle.usage]} – code postal ${driver.postcode}`,
      ],
    });
    session.auto = {};
    return redirect(reply, `devis/${quote.id}`);
  });

  // ---- Home quote (MRH) ------------------------------------------------------------------------

  app.get('/devis/habitation', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    session.home = {};
    return redirect(reply, 'devis/habitation/logement');
  });

  app.get('/devis/habitation/logement', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    return sendHtml(reply, 200, dwellingStepPage(base, session.home.dwellingRaw ?? {}));
  });

  app.post<{ Body: FormBody | undefined }>('/devis/habitation/logement', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const checked = checkDwelling(request.body);
    if (!checked.ok) return sendHtml(reply, 422, dwellingStepPage(base, checked.raw, checked.errors, checked.invalid));
    session.home.dwelling = checked.value;
    session.home.dwellingRaw = checked.raw;
    return redirect(reply, 'devis/habitation/occupation');
  });

  app.get('/devis/habitation/occupation', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    if (!session.home.dwelling) return redirect(reply, 'devis/habitation/logement');
    return sendHtml(reply, 200, occupationStepPage(base, {}));
  });

  app.post<{ Body: FormBody | undefined }>('/devis/habitation/occupation', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const { dwelling } = session.home;
    if (!dwelling) return redirect(reply, 'devis/habitation/logement');
    const checked = checkOccupation(request.body);
    if (!checked.ok) return sendHtml(reply, 422, occupationStepPage(base, checked.raw, checked.errors, checked.invalid));
    const { occupantStatus, contentsCapitalEur } = checked.value;
    const premiumEur = homePremium({ ...dwelling, occupantStatus, contentsCapitalEur });
    const quote = saveQuote(session, {
      productLabel: 'Multirisque habitation',
      productShort: 'habitation',
      insuredName: dwelling.insuredName,
      premiumEur,
      formulaLabel: `Habitation ${OCCUPANT_LABELS[occupantStatus].toLowerCase()}`,
      details: [
        `Logement : ${DWELLING_LABELS[dwelling.dwellingType]} de ${dwelling.surfaceM2} m², ${dwelling.rooms} pièce(s), code postal ${dwelling.postcode}`,
        `Occupant : ${OCCUPANT_LABELS[occupantStatus]}`,
        `Capital mobilier : ${formatEuros(contentsCapitalEur)}`,
      ],
    });
    session.home = {};
    return redirect(reply, `devis/${quote.id}`);
  });

  // ---- Results and PDFs ------------------------------------------------------------------------

  function saveQuote(session: Session, input: Omit<Quote, 'id' | 'reference' | 'owner' | 'createdAtMs'>): Quote {
    const id = randomBytes(8).toString('hex');
    const quote: Quote = { ...input, id, reference: `DEV-${id.slice(0, 8).toUpperCase()}`, owner: session.user, createdAtMs: clock.now() };
    quotes.set(id, quote);
    if (quotes.size > MAX_QUOTES) {
      const oldest = quotes.keys().next();
      if (!oldest.done) quotes.delete(oldest.value);
    }
    return quote;
  }

  function ownQuote(session: Session, id: string): Quote | undefined {
    const quote = quotes.get(id);
    return quote?.owner === session.user ? quote : undefined;
  }

  app.get<{ Params: { id: string } }>('/devis/:id', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const quote = ownQuote(session, request.params.id);
    if (!quote) return sendHtml(reply, 404, notFoundPage(base, true));
    return sendHtml(reply, 200, resultPage(base, quote));
  });

  app.get<{ Params: { id: string } }>('/devis/:id/pdf', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const quote = ownQuote(session, request.params.id);
    if (!quote) return sendHtml(reply, 404, notFoundPage(base, true));
    const pdf = await quotePdf(quote);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="devis-${quote.reference}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });

  // ---- Attestation (a routine) -----------------------------------------------------------------

  function validity(): { from: string; to: string } {
    const year = new Date(clock.now()).getUTCFullYear();
    return { from: `01/01/${year}`, to: `31/12/${year}` };
  }

  app.get('/attestation', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    return sendHtml(reply, 200, attestationFormPage(base, '', null));
  });

  app.post<{ Body: FormBody | undefined }>('/attestation', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const policy = field(request.body, 'policy_number').toUpperCase();
    if (policy === '') return sendHtml(reply, 422, attestationFormPage(base, policy, 'Le champ « Numéro de contrat » est obligatoire.'));
    if (!POLICY_PATTERN.test(policy)) return sendHtml(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
    return redirect(reply, `attestation/${policy}`);
  });

  app.get<{ Params: { policy: string } }>('/attestation/:policy', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const policy = request.params.policy;
    if (!POLICY_PATTERN.test(policy)) return sendHtml(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
    const { from, to } = validity();
    return sendHtml(reply, 200, attestationPage(base, policy, from, to));
  });

  app.get<{ Params: { policy: string } }>('/attestation/:policy/pdf', async (request, reply) => {
    const session = loggedIn(request, reply);
    if (!session) return reply;
    const policy = request.params.policy;
    if (!POLICY_PATTERN.test(policy)) return sendHtml(reply, 404, notFoundPage(base, true));
    const { from, to } = validity();
    const pdf = await attestationPdf({ policyNumber: policy, validFrom: from, validTo: to, createdAtMs: clock.now() });
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="attestation-${policy}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });

  // ---- The sandbox phone -----------------------------------------------------------------------

  app.get<{ Querystring: { format?: string } }>('/phone', async (request, reply) => {
    if (request.query.format === 'json') {
      return reply
        .header('Cache-Control', 'no-store')
        .send({ messages: messages.map((m) => ({ to: m.to, code: m.code, sent_at: new Date(m.sentAtMs).toISOString() })) });
    }
    return sendHtml(reply, 200, phonePage(base, messages));
  });
}
