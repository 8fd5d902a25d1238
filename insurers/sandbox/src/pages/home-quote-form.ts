import { HEADINGS, type PortalSession } from '../page-driver.js';
import { PAGES } from './expectations.js';
import type { HomeQuoteData } from '../products.js';
import { HomePage } from './home-page.js';

/** The home (MRH) quote's two steps: Logement, Occupation. */
export class HomeQuoteForm {
  /** Its first page, behind the login: a session still logged in opens it directly. */
  static readonly firstPath = '/devis/habitation';

  constructor(private readonly portal: PortalSession) {}

  /** From the portal's home page. */
  async open(): Promise<void> {
    await new HomePage(this.portal).follow('Nouveau devis habitation');
  }

  async fillDwelling(data: HomeQuoteData): Promise<void> {
    await this.portal.expectPage(PAGES.homeDwelling);
    await this.portal.fill('Nom de l’assuré', data.insured_name);
    await this.portal.select('Type de logement', data.dwelling_type);
    await this.portal.fill('Surface (m²)', String(data.surface_m2));
    await this.portal.fill('Nombre de pièces', String(data.rooms));
    await this.portal.fill('Code postal', data.postcode);
    const landing = await this.portal.navigate(
      'the button "Continuer"',
      this.portal.page.getByRole('button', { name: 'Continuer', exact: true }),
    );
    await this.portal.expectAfterSubmit(landing, PAGES.homeOccupation, HEADINGS.homeDwelling, 'filling in the dwelling');
  }

  async fillOccupation(data: HomeQuoteData): Promise<void> {
    await this.portal.select('Statut de l’occupant', data.occupant_status);
    await this.portal.fill('Capital mobilier (€)', String(data.contents_capital_eur));
  }

  /** Clicks "Calculer le tarif": the pricing happens at the insurer. Call markSubmitted() before. */
  async calculate(): Promise<void> {
    const landing = await this.portal.navigate(
      'the button "Calculer le tarif"',
      this.portal.page.getByRole('button', { name: 'Calculer le tarif', exact: true }),
    );
    await this.portal.expectAfterSubmit(landing, PAGES.result, HEADINGS.homeOccupation, 'pricing the home quote');
  }
}
