import { HEADINGS, type PortalSession } from '../page-driver.js';
import { PAGES } from './expectations.js';
import type { AutoQuoteData } from '../products.js';
import { HomePage } from './home-page.js';

const FORMULA_LABELS: Record<AutoQuoteData['formula'], string> = {
  tiers: 'Tiers',
  tiers_etendu: 'Tiers étendu',
  tous_risques: 'Tous risques',
};

/** The auto quote's three steps: Conducteur, Véhicule, Formule. */
export class AutoQuoteForm {
  /** Its first page, behind the login: a session still logged in opens it directly. */
  static readonly firstPath = '/devis/auto';

  constructor(private readonly portal: PortalSession) {}

  /** From the portal's home page. */
  async open(): Promise<void> {
    await new HomePage(this.portal).follow('Nouveau devis auto');
  }

  async fillDriver(data: AutoQuoteData): Promise<void> {
    await this.portal.expectPage(PAGES.autoDriver);
    await this.portal.fill('Nom de l’assuré', data.insured_name);
    await this.portal.fill('Date de naissance du conducteur', data.driver_birth_date);
    await this.portal.fill('Date d’obtention du permis', data.licence_date);
    await this.portal.fill('Coefficient bonus-malus', data.bonus_malus.toFixed(2));
    await this.portal.fill('Code postal', data.postcode);
    const landing = await this.portal.navigate(
      'the button "Continuer"',
      this.portal.page.getByRole('button', { name: 'Continuer', exact: true }),
    );
    await this.portal.expectAfterSubmit(landing, PAGES.autoVehicle, HEADINGS.autoDriver, 'filling in the driver');
  }

  async fillVehicle(data: AutoQuoteData): Promise<void> {
    await this.portal.fill('Marque', data.vehicle_make ?? '');
    await this.portal.fill('Modèle', data.vehicle_model ?? '');
    await this.portal.fill('Immatriculation', data.registration ?? '');
    await this.portal.fill('Date de première mise en circulation', data.first_registration_date);
    await this.portal.select('Usage', data.usage);
    const landing = await this.portal.navigate(
      'the button "Continuer"',
      this.portal.page.getByRole('button', { name: 'Continuer', exact: true }),
    );
    await this.portal.expectAfterSubmit(landing, PAGES.autoFormula, HEADINGS.autoVehicle, 'filling in the vehicle');
  }

  async chooseFormula(formula: AutoQuoteData['formula']): Promise<void> {
    await this.portal.check('radio', FORMULA_LABELS[formula]);
  }

  /** Clicks "Calculer le tarif": the pricing happens at the insurer. Call markSubmitted() before. */
  async calculate(): Promise<void> {
    const landing = await this.portal.navigate(
      'the button "Calculer le tarif"',
      this.portal.page.getByRole('button', { name: 'Calculer le tarif', exact: true }),
    );
    await this.portal.expectAfterSubmit(landing, PAGES.result, HEADINGS.autoFormula, 'pricing the auto quote');
  }
}
