import { readFile } from 'node:fs/promises';
import { RobotError, z, type RobotDocument, type RobotOffer } from '@courtier/adapter-kit';
import { apiChanged, type ApiAnswer, type SpaSession } from '../spa-driver.js';
import { PAGES } from './expectations.js';

/** The API's offers, as the robot knows them: a change of shape is a portal change, not a crash. */
const offersAnswer = z.object({
  id: z.string(),
  reference: z.string(),
  offers: z.array(
    z.object({
      formule: z.string(),
      libelle: z.string(),
      prime_annuelle_eur: z.number(),
      prime_mensuelle_eur: z.number().nullable(),
      franchise_eur: z.number().nullable(),
      garanties: z.array(z.object({ code: z.string(), libelle: z.string(), incluse: z.boolean(), plafond_eur: z.number().nullable() })),
    }),
  ),
});

const documentsAnswer = z.object({
  documents: z.array(z.object({ id: z.string(), kind: z.string(), label: z.string(), url: z.string() })),
});

export interface PricedQuote {
  id: string;
  reference: string;
  offres: RobotOffer[];
}

function parsed<S extends z.ZodType>(schema: S, answer: ApiAnswer, step: string, path: string): z.output<S> {
  const result = schema.safeParse(answer.body);
  if (result.success) return result.data;
  throw apiChanged(
    step,
    path,
    result.error.issues.map((i) => `${i.path.map(String).join('.') || 'the answer'}: ${i.message}`),
  );
}

/** "Nos formules" and then the quote's documents. */
export class OffersPage {
  constructor(private readonly spa: SpaSession) {}

  /** The formulas the last step's answer priced, once the app shows them. */
  async read(answer: ApiAnswer): Promise<PricedQuote> {
    const quote = parsed(offersAnswer, answer, PAGES.offers.step, '/api/quotes/{id}/steps');
    await this.spa.expectPage(PAGES.offers);
    return { id: quote.id, reference: quote.reference, offres: quote.offers };
  }

  /** Chooses the formula ("Choisir Tous risques"), then lists the documents the app fetches for it. */
  async choose(quote: PricedQuote, formule: string): Promise<{ id: string; kind: string; label: string }[]> {
    const offer = quote.offres.find((o) => o.formule === formule);
    if (!offer) throw new RobotError('business', 'data_refused', `Horizon Direct offers no formula ${formule} for this risk.`);
    const name = `Choisir ${offer.libelle}`;
    const listed = this.spa.answerTo({ method: 'GET', path: /^\/quotes\/[0-9a-f]+\/documents$/ });
    const chosen = await this.spa.call(`the formula ${formule}`, { method: 'POST', path: /^\/quotes\/[0-9a-f]+\/steps$/ }, () =>
      this.spa.act(`the button "${name}"`, (o) => this.spa.page.getByRole('button', { name, exact: true }).click(o)),
    );
    if (chosen.status !== 200)
      throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the choice of ${formule} with ${chosen.status}.`);
    const documents = parsed(
      documentsAnswer,
      await this.spa.awaitAnswer('the documents', listed),
      PAGES.documents.step,
      '/api/quotes/{id}/documents',
    );
    await this.spa.expectPage(PAGES.documents);
    return documents.documents;
  }

  /**
   * Downloads the documents by their links ("Télécharger : Devis"): the quote's PDF, and the others
   * as the result's documents. A document that does not come is left out (the result is partial
   * without the quote's PDF).
   */
  async download(documents: readonly { kind: string; label: string }[]): Promise<{ pdf: Buffer | null; others: RobotDocument[] }> {
    let pdf: Buffer | null = null;
    const others: RobotDocument[] = [];
    for (const document of documents) {
      const bytes = await this.downloadOne(`Télécharger : ${document.label}`);
      if (!bytes) continue;
      if (document.kind === 'quote') pdf = bytes;
      else if (others.length < 5)
        others.push({
          kind: document.kind === 'conditions' || document.kind === 'information' ? document.kind : 'other',
          label: document.label,
          pdf: bytes,
        });
    }
    return { pdf, others };
  }

  private async downloadOne(linkName: string): Promise<Buffer | null> {
    this.spa.throwIfAborted();
    const page = this.spa.page;
    const started = page.waitForEvent('download', { timeout: this.spa.timeouts.downloadMs });
    started.catch(() => undefined);
    try {
      await page.getByRole('link', { name: linkName, exact: true }).click({ timeout: this.spa.timeouts.actionMs });
      const download = await started;
      try {
        const bytes = await readFile(await download.path());
        return bytes.subarray(0, 5).toString('latin1') === '%PDF-' ? bytes : null;
      } finally {
        await download.delete().catch(() => undefined);
      }
    } catch {
      this.spa.throwIfAborted();
      return null;
    }
  }
}
