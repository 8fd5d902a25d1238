import type { FastifyInstance, FastifyReply } from 'fastify';
import type { FormBody } from '../sandbox/validation.js';
import { messagePage, quotePage, stepPage, TEXTS } from './pages.js';
import { quotePdf } from './pdf.js';
import { isProductCode, PRODUCTS, redesignedSteps, type StepDef } from './products.js';
import type { TraditionPortal } from './portal.js';
import type { Draft } from './state.js';

type DraftRoute = { Params: { no: string } };

/**
 * The quote wizards, postback style: a draft lives at /devis/<n°>; GET shows its current step (or
 * its quote once priced), POST submits that step with the page's one-use view state. A draft
 * survives its session: after a new login, the home page offers to resume it.
 */
export async function quoteRoutes(app: FastifyInstance, { portal }: { portal: TraditionPortal }): Promise<void> {
  const { base, clock, html, redirect, state } = portal;
  app.addHook('preHandler', portal.requireSession);

  const stepsOf = (draft: Draft): readonly StepDef[] =>
    draft.redesign ? redesignedSteps(PRODUCTS[draft.product]) : PRODUCTS[draft.product].steps;
  const notFound = (reply: FastifyReply) => html(reply, 404, messagePage('Devis introuvable', 'Ce devis n’existe pas ou plus.', base));
  const view = (draft: Draft) => ({
    no: draft.no,
    product: PRODUCTS[draft.product],
    steps: stepsOf(draft),
    index: draft.stepIndex,
    values: draft.values,
  });
  const pdfReady = (draft: Draft) =>
    draft.priced !== null &&
    (draft.priced.views - 1 >= portal.pdf.afterRefreshes || clock.now() - draft.priced.pricedAtMs >= portal.pdf.afterMs);

  app.get<{ Params: { product: string } }>('/devis/nouveau/:product', async (request, reply) => {
    const { product } = request.params;
    if (!isProductCode(product)) return notFound(reply);
    const draft = state.newDraft(portal.sessionOf(request).user, product, portal.redesigned());
    return redirect(reply, `devis/${draft.no}`);
  });

  app.get<DraftRoute>('/devis/:no', async (request, reply) => {
    const draft = state.ownDraft(portal.sessionOf(request).user, request.params.no);
    if (!draft) return notFound(reply);
    if (draft.priced) {
      draft.priced.views += 1;
      return html(reply, 200, quotePage(base, draft.no, draft.priced, pdfReady(draft)));
    }
    return html(reply, 200, stepPage(base, view(draft), state.draftViewState(draft)));
  });

  app.post<DraftRoute & { Body: FormBody | undefined }>('/devis/:no', async (request, reply) => {
    const draft = state.ownDraft(portal.sessionOf(request).user, request.params.no);
    if (!draft) return notFound(reply);
    if (draft.priced || !state.consumeDraftViewState(draft, request.body?.__VIEWSTATE))
      return html(reply, 400, messagePage(TEXTS.invalidHeading, 'Le formulaire envoyé n’est plus valide.', base));
    const steps = stepsOf(draft);
    const step = steps[draft.stepIndex];
    if (!step) return notFound(reply);
    const raw: Record<string, string> = {};
    const errors: string[] = [];
    const invalid = new Set<string>();
    for (const f of step.fields) {
      const value = typeof request.body?.[f.name] === 'string' ? String(request.body[f.name]).trim().slice(0, 200) : '';
      raw[f.name] = value;
      const problem = f.check(value, clock.now());
      if (problem) {
        errors.push(problem);
        invalid.add(f.name);
      }
    }
    Object.assign(draft.values, raw);
    if (errors.length > 0) return html(reply, 422, stepPage(base, view(draft), state.draftViewState(draft), errors, invalid));
    if (draft.stepIndex < steps.length - 1) {
      draft.stepIndex += 1;
      return redirect(reply, `devis/${draft.no}`);
    }
    draft.priced = { ...PRODUCTS[draft.product].price(draft.values, clock.now()), pricedAtMs: clock.now(), views: 0 };
    return redirect(reply, `devis/${draft.no}`);
  });

  app.get<DraftRoute>('/devis/:no/pdf', async (request, reply) => {
    const draft = state.ownDraft(portal.sessionOf(request).user, request.params.no);
    if (!draft?.priced) return notFound(reply);
    if (!pdfReady(draft)) return html(reply, 409, messagePage(TEXTS.quoteHeading, TEXTS.preparing, base));
    const pdf = await quotePdf({
      no: draft.no,
      productLabel: PRODUCTS[draft.product].label,
      priced: draft.priced,
      pricedAtMs: draft.priced.pricedAtMs,
    });
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="devis-${draft.no}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });
}
