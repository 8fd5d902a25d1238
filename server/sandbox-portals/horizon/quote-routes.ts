import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DOCUMENTS, documentPdf } from './documents.js';
import { carBase, carOffers, homeBase, homeOffers, type CarRisk, type HomeRisk, type Offer } from './pricing.js';
import { apiError } from './session-routes.js';
import type { HorizonState, Quote, Session } from './state.js';
import { checkStep } from './validation.js';
import { PRODUCTS, wizardOf, type ProductCode } from './wizard.js';

/** The step after the last form: the choice among the priced formulas. */
const FORMULA_STEP = 'formule';
const STEP_BODY = 16 * 1024;

type QuoteParams = { Params: { id: string } };

function quoteView(quote: Quote, base: string) {
  return {
    id: quote.id,
    reference: quote.reference,
    product: quote.product,
    steps: quote.steps,
    next_step: quote.chosen ? null : quote.offers ? FORMULA_STEP : (quote.steps[quote.answered]?.name ?? null),
    offers: quote.offers,
    chosen: quote.chosen,
    documents_url: quote.chosen ? `${base}/api/quotes/${quote.id}/documents` : null,
  };
}

/** Every formula, priced from the wizard's answers (the names are the same in both designs). */
function offersOf(quote: Quote, nowMs: number): Offer[] {
  if (quote.product === 'voiture') return carOffers(carBase(quote.answers as unknown as CarRisk, nowMs));
  const risk = quote.answers as unknown as HomeRisk;
  return homeOffers(homeBase(risk), risk.valeur_mobilier);
}

/**
 * The quote API: a quote is made for a product, its steps are posted one after the other to one
 * endpoint (`{step, answers}`), the last one prices every formula, choosing one issues the quote's
 * documents. Every call needs a session whose login is approved.
 */
export async function quoteRoutes(
  app: FastifyInstance,
  { state, base, redesigned }: { state: HorizonState; base: string; redesigned: () => boolean },
): Promise<void> {
  const signedIn = new WeakMap<FastifyRequest, Session>();
  app.addHook('preHandler', async (request, reply) => {
    const session = state.sessionOf(request);
    if (!session) return apiError(reply, 401, 'not_signed_in', 'Connectez-vous.');
    if (session.stage !== 'ok') return apiError(reply, 403, 'approval_required', 'Validez la connexion dans l’application Horizon.');
    signedIn.set(request, session);
    return undefined;
  });
  const sessionOf = (request: FastifyRequest) => signedIn.get(request)!;
  const ownQuote = (request: FastifyRequest<QuoteParams>, reply: FastifyReply) => {
    const quote = state.quoteOf(sessionOf(request), request.params.id);
    if (!quote) apiError(reply, 404, 'unknown_quote', 'Devis introuvable.');
    return quote;
  };

  app.post<{ Body: { product?: unknown } | null }>('/api/quotes', { bodyLimit: STEP_BODY }, async (request, reply) => {
    const product = request.body?.product;
    if (typeof product !== 'string' || !PRODUCTS.includes(product as ProductCode))
      return apiError(reply, 422, 'unknown_product', 'Produit inconnu.', { products: PRODUCTS });
    const quote = state.newQuote(sessionOf(request), product as ProductCode, wizardOf(product as ProductCode, redesigned()));
    return reply.code(201).header('Cache-Control', 'no-store').send(quoteView(quote, base));
  });

  app.get<QuoteParams>('/api/quotes/:id', async (request, reply) => {
    const quote = ownQuote(request, reply);
    return quote ? reply.header('Cache-Control', 'no-store').send(quoteView(quote, base)) : reply;
  });

  app.post<QuoteParams & { Body: { step?: unknown; answers?: unknown } | null }>(
    '/api/quotes/:id/steps',
    { bodyLimit: STEP_BODY },
    async (request, reply) => {
      const quote = ownQuote(request, reply);
      if (!quote) return reply;
      const expected = quoteView(quote, base).next_step;
      const step = request.body?.step;
      if (expected === null) return apiError(reply, 409, 'quote_issued', 'Ce devis est déjà établi.');
      if (step !== expected) return apiError(reply, 409, 'wrong_step', `Étape attendue : ${expected}.`, { expected });
      const answers = request.body?.answers;
      if (expected === FORMULA_STEP) {
        const formule = (answers as { formule?: unknown } | undefined)?.formule;
        if (!quote.offers?.some((o) => o.formule === formule))
          return apiError(reply, 422, 'invalid_answers', 'Choisissez une formule.', { errors: { formule: 'Formule inconnue.' } });
        quote.chosen = formule as string;
        return reply.header('Cache-Control', 'no-store').send(quoteView(quote, base));
      }
      const spec = quote.steps[quote.answered]!;
      const checked = checkStep(spec, answers, quote.answers, state.clock.now());
      if (!checked.ok) return apiError(reply, 422, 'invalid_answers', 'Certaines réponses sont invalides.', { errors: checked.errors });
      Object.assign(quote.answers, checked.values);
      quote.answered += 1;
      if (quote.answered === quote.steps.length) quote.offers = offersOf(quote, state.clock.now());
      return reply.header('Cache-Control', 'no-store').send(quoteView(quote, base));
    },
  );

  app.get<QuoteParams>('/api/quotes/:id/documents', async (request, reply) => {
    const quote = ownQuote(request, reply);
    if (!quote) return reply;
    if (!quote.chosen) return apiError(reply, 409, 'no_formula', 'Choisissez d’abord une formule.');
    return reply.header('Cache-Control', 'no-store').send({
      documents: DOCUMENTS.map((d) => ({ ...d, url: `${base}/api/quotes/${quote.id}/documents/${d.id}` })),
    });
  });

  app.get<{ Params: { id: string; document: string } }>('/api/quotes/:id/documents/:document', async (request, reply) => {
    const quote = ownQuote(request, reply);
    if (!quote) return reply;
    const document = DOCUMENTS.find((d) => d.id === request.params.document);
    if (!quote.chosen || !document) return apiError(reply, 404, 'unknown_document', 'Document introuvable.');
    const pdf = await documentPdf(quote, document.id);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${document.id}-${quote.reference}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });
}
