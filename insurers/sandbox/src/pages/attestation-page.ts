import { RobotError } from '@courtier/adapter-kit';
import { HEADINGS, type PortalSession } from '../page-driver.js';
import { downloadPdf } from './download.js';
import { HomePage } from './home-page.js';

/** "Demande d’attestation" (the contract number), then "Attestation d’assurance" and its PDF. */
export class AttestationPage {
  /** Its first page, behind the login: a session still logged in opens it directly. */
  static readonly firstPage = { path: '/attestation', heading: HEADINGS.attestationForm };

  constructor(private readonly portal: PortalSession) {}

  /** From the portal's home page. */
  async open(): Promise<void> {
    const landing = await new HomePage(this.portal).follow('Attestation d’assurance');
    if (landing.heading !== AttestationPage.firstPage.heading) throw this.portal.unexpected(landing, 'opening the attestation form');
  }

  async request(policyNumber: string): Promise<void> {
    await this.portal.fill('Numéro de contrat', policyNumber);
    const landing = await this.portal.navigate(
      'the button "Obtenir l’attestation"',
      this.portal.page.getByRole('button', { name: 'Obtenir l’attestation', exact: true }),
    );
    if (landing.heading === HEADINGS.attestationForm && landing.alert?.includes('Contrat introuvable')) {
      throw new RobotError('business', 'policy_not_found', `The sandbox portal has no contract ${policyNumber}: ${landing.alert}`);
    }
    this.portal.expectAfterSubmit(landing, HEADINGS.attestation, HEADINGS.attestationForm, 'requesting the attestation');
  }

  downloadPdf(): Promise<Buffer | null> {
    return downloadPdf(this.portal, 'Télécharger l’attestation (PDF)');
  }
}
