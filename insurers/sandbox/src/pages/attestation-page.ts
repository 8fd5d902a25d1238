import { RobotError } from '@courtier/adapter-kit';
import { HEADINGS, type PortalSession } from '../page-driver.js';
import { downloadPdf } from './download.js';
import { PAGES } from './expectations.js';
import { HomePage } from './home-page.js';

/** "Demande d’attestation" (the contract number), then "Attestation d’assurance" and its PDF. */
export class AttestationPage {
  /** Its first page, behind the login: a session still logged in opens it directly. */
  static readonly firstPath = '/attestation';

  constructor(private readonly portal: PortalSession) {}

  /** From the portal's home page. */
  async open(): Promise<void> {
    await new HomePage(this.portal).follow('Attestation d’assurance');
  }

  async request(policyNumber: string): Promise<void> {
    await this.portal.expectPage(PAGES.attestationForm);
    await this.portal.fill('Numéro de contrat', policyNumber);
    const landing = await this.portal.navigate(
      'the button "Obtenir l’attestation"',
      this.portal.page.getByRole('button', { name: 'Obtenir l’attestation', exact: true }),
    );
    if (landing.heading === HEADINGS.attestationForm && landing.alert?.includes('Contrat introuvable')) {
      throw new RobotError('business', 'policy_not_found', `The sandbox portal has no contract ${policyNumber}: ${landing.alert}`);
    }
    await this.portal.expectAfterSubmit(landing, PAGES.attestation, HEADINGS.attestationForm, 'requesting the attestation');
  }

  downloadPdf(): Promise<Buffer | null> {
    return downloadPdf(this.portal, 'Télécharger l’attestation (PDF)');
  }
}
