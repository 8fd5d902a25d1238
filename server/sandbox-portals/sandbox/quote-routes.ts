import type { FastifyInstance } from 'fastify';
import {
  driverStepPage,
  needsStepPage,
  dwellingStepPage,
  formulaStepPage,
  occupationStepPage,
  resultPage,
  vehicleStepPage,
  type QuoteView,
} from './quote-pages.js';
import { notFoundPage } from './pages.js';
import { quotePdf } from './pdf.js';
import type { Portal, Session } from './portal.js';
import {
  autoPremium,
  DWELLING_LABELS,
  FORMULA_LABELS,
  formatEuros,
  formatFrenchDate,
  homePremium,
  OCCUPANT_LABELS,
  USAGE_LABELS,
} from './pricing.js';
import { checkDriver, checkDwelling, checkFormula, checkOccupation, checkVehicle, type FormBody } from './validation.js';

/** Quotes kept for their results page and PDF; the oldest go first (a long-running demo server). */
const MAX_QUOTES = 5_000;

interface Quote extends QuoteView {
  owner: string;
  productShort: string;
  createdAtMs: number;
  details: string[];
}

type FormRoute = { Body: FormBody | undefined };
type QuoteRoute = { Params: { id: string } };

/**
 * The quote forms (auto in three steps, home in two), their results page and PDF. An
 * encapsulated plugin: every page needs a logged-in broker, checked once by its preHandler.
 */
export async function quoteRoutes(app: FastifyInstance, { portal }: { portal: Portal }): Promise<void> {
  const { base, clock, html, redirect } = portal;
  const quotes = new Map<string, Quote>();
  app.addHook('preHandler', portal.requireSession);

  function saveQuote(session: Session, input: Omit<Quote, 'id' | 'reference' | 'owner' | 'createdAtMs'>): Quote {
    const id = portal.randomBytes(8).toString('hex');
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

  // ---- Auto quote ----

  app.get('/devis/auto', async (request, reply) => {
    const session = portal.sessionOf(request);
    session.auto = {};
    return redirect(reply, portal.redesigned() ? 'devis/auto/besoins' : 'devis/auto/conducteur');
  });

  // The redesign's added first step.
  app.get('/devis/auto/besoins', async (_request, reply) => html(reply, 200, needsStepPage(base)));
  app.post('/devis/auto/besoins', async (_request, reply) => redirect(reply, 'devis/auto/conducteur'));

  app.get('/devis/auto/conducteur', async (request, reply) => {
    const session = portal.sessionOf(request);
    return html(reply, 200, driverStepPage(base, session.auto.driverRaw ?? {}, null, undefined, portal.redesigned()));
  });

  app.post<FormRoute>('/devis/auto/conducteur', async (request, reply) => {
    const session = portal.sessionOf(request);
    const checked = checkDriver(request.body, clock.now());
    if (!checked.ok) return html(reply, 422, driverStepPage(base, checked.raw, checked.errors, checked.invalid, portal.redesigned()));
    session.auto.driver = checked.value;
    session.auto.driverRaw = checked.raw;
    return redirect(reply, 'devis/auto/vehicule');
  });

  app.get('/devis/auto/vehicule', async (request, reply) => {
    const session = portal.sessionOf(request);
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    return html(reply, 200, vehicleStepPage(base, session.auto.vehicleRaw ?? {}));
  });

  app.post<FormRoute>('/devis/auto/vehicule', async (request, reply) => {
    const session = portal.sessionOf(request);
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    const checked = checkVehicle(request.body, clock.now());
    if (!checked.ok) return html(reply, 422, vehicleStepPage(base, checked.raw, checked.errors, checked.invalid));
    session.auto.vehicle = checked.value;
    session.auto.vehicleRaw = checked.raw;
    return redirect(reply, 'devis/auto/formule');
  });

  app.get('/devis/auto/formule', async (request, reply) => {
    const session = portal.sessionOf(request);
    if (!session.auto.driver) return redirect(reply, 'devis/auto/conducteur');
    if (!session.auto.vehicle) return redirect(reply, 'devis/auto/vehicule');
    return html(reply, 200, formulaStepPage(base, {}));
  });

  app.post<FormRoute>('/devis/auto/formule', async (request, reply) => {
    const session = portal.sessionOf(request);
    const { driver, vehicle } = session.auto;
    if (!driver) return redirect(reply, 'devis/auto/conducteur');
    if (!vehicle) return redirect(reply, 'devis/auto/vehicule');
    const checked = checkFormula(request.body);
    if (!checked.ok) return html(reply, 422, formulaStepPage(base, checked.raw, checked.errors, checked.invalid));
    const premiumEur = autoPremium(
      {
        driverBirthDate: driver.birthDate,
        licenceDate: driver.licenceDate,
        bonusMalus: driver.bonusMalus,
        postcode: driver.postcode,
        usage: vehicle.usage,
        formula: checked.value.formula,
      },
      clock.now(),
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

  // ---- Home quote (MRH) ----

  app.get('/devis/habitation', async (request, reply) => {
    const session = portal.sessionOf(request);
    session.home = {};
    return redirect(reply, 'devis/habitation/logement');
  });

  app.get('/devis/habitation/logement', async (request, reply) => {
    const session = portal.sessionOf(request);
    return html(reply, 200, dwellingStepPage(base, session.home.dwellingRaw ?? {}, null, undefined, portal.redesigned()));
  });

  app.post<FormRoute>('/devis/habitation/logement', async (request, reply) => {
    const session = portal.sessionOf(request);
    const checked = checkDwelling(request.body);
    if (!checked.ok) return html(reply, 422, dwellingStepPage(base, checked.raw, checked.errors, checked.invalid, portal.redesigned()));
    session.home.dwelling = checked.value;
    session.home.dwellingRaw = checked.raw;
    return redirect(reply, 'devis/habitation/occupation');
  });

  app.get('/devis/habitation/occupation', async (request, reply) => {
    const session = portal.sessionOf(request);
    if (!session.home.dwelling) return redirect(reply, 'devis/habitation/logement');
    return html(reply, 200, occupationStepPage(base, {}));
  });

  app.post<FormRoute>('/devis/habitation/occupation', async (request, reply) => {
    const session = portal.sessionOf(request);
    const { dwelling } = session.home;
    if (!dwelling) return redirect(reply, 'devis/habitation/logement');
    const checked = checkOccupation(request.body);
    if (!checked.ok) return html(reply, 422, occupationStepPage(base, checked.raw, checked.errors, checked.invalid));
    const { occupantStatus, contentsCapitalEur } = checked.value;
    const quote = saveQuote(session, {
      productLabel: 'Multirisque habitation',
      productShort: 'habitation',
      insuredName: dwelling.insuredName,
      premiumEur: homePremium({ ...dwelling, occupantStatus, contentsCapitalEur }),
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

  // ---- Results and PDFs ----

  app.get<QuoteRoute>('/devis/:id', async (request, reply) => {
    const session = portal.sessionOf(request);
    const quote = ownQuote(session, request.params.id);
    if (!quote) return html(reply, 404, notFoundPage(base, true));
    return html(reply, 200, resultPage(base, quote));
  });

  app.get<QuoteRoute>('/devis/:id/pdf', async (request, reply) => {
    const session = portal.sessionOf(request);
    const quote = ownQuote(session, request.params.id);
    if (!quote) return html(reply, 404, notFoundPage(base, true));
    const pdf = await quotePdf(quote);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="devis-${quote.reference}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });
}
