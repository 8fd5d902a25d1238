import { normaliseSpaces, parseEuros, RobotError } from '@courtier/adapter-kit';
import type { PortalSession } from '../page-driver.js';
import { downloadPdf } from './download.js';

export interface QuoteResult {
  premiumEur: number;
  formula: string;
  reference: string;
  /** "Pièces à fournir", when the portal lists documents to send. */
  pieces: string | null;
}

/**
 * "Votre tarif": a <dl> read by role — its terms (<dt>) and definitions (<dd>) are paired in
 * document order — and the PDF link.
 */
export class ResultsPage {
  constructor(private readonly portal: PortalSession) {}

  /** Term → value, from the page's definition list. */
  private async definitions(): Promise<Map<string, string>> {
    const page = this.portal.page;
    await this.portal.act('the result list (definition)', (o) => page.getByRole('definition').first().waitFor(o));
    const terms = await this.portal.act('the result terms', () => page.getByRole('term').allInnerTexts());
    const values = await this.portal.act('the result values', () => page.getByRole('definition').allInnerTexts());
    if (terms.length !== values.length) {
      throw new RobotError('technical', 'layout_changed', `The result list has ${terms.length} terms for ${values.length} values.`);
    }
    return new Map(terms.map((term, i) => [normaliseSpaces(term), normaliseSpaces(values[i] ?? '')]));
  }

  async read(): Promise<QuoteResult> {
    const list = await this.definitions();
    const value = (term: string): string => {
      const found = list.get(term);
      if (found === undefined)
        throw new RobotError('technical', 'layout_changed', `The sandbox portal changed: the result has no "${term}".`);
      return found;
    };
    const premiumText = value('Prime annuelle');
    const premiumEur = parseEuros(premiumText);
    if (premiumEur === null) throw new RobotError('technical', 'layout_changed', `The premium "${premiumText}" is not an amount in euros.`);
    return { premiumEur, formula: value('Formule'), reference: value('Référence'), pieces: list.get('Pièces à fournir') ?? null };
  }

  downloadPdf(): Promise<Buffer | null> {
    return downloadPdf(this.portal, 'Télécharger le devis (PDF)');
  }
}
