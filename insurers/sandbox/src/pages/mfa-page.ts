import { normaliseSpaces, RobotError } from '@courtier/adapter-kit';
import { HEADINGS, type Landing, type PortalSession } from '../page-driver.js';
import { PAGES } from './expectations.js';

export type MfaOutcome = { ok: true } | { ok: false; message: string };

/** "Vérification en deux étapes": the code sent by SMS, in "Code reçu par SMS", then "Valider". */
export class MfaPage {
  constructor(private readonly portal: PortalSession) {}

  /** What the portal says about the code (role="status"): "Un code à 6 chiffres a été envoyé au 06 •• •• •• 42." */
  async instructions(): Promise<string> {
    await this.portal.expectPage(PAGES.mfa);
    return normaliseSpaces(
      await this.portal.act('the MFA instructions (status)', (o) => this.portal.page.getByRole('status').first().innerText(o)),
    );
  }

  /**
   * Types a code. ok: the portal let us in. Otherwise the portal's message ("Code incorrect. Il
   * vous reste 2 essai(s).") for the next attempt. Out of tries or too late: a RobotError.
   */
  async enter(code: string): Promise<MfaOutcome> {
    const typed = code.trim();
    const landing = await this.portal.withSecrets([typed], async () => {
      await this.portal.fill('Code reçu par SMS', typed);
      return this.portal.navigate('the button "Valider"', this.portal.page.getByRole('button', { name: 'Valider', exact: true }));
    });
    return this.outcome(landing);
  }

  private outcome(landing: Landing): MfaOutcome {
    if (landing.heading === HEADINGS.home) return { ok: true };
    if (landing.heading === HEADINGS.mfa && landing.alert) return { ok: false, message: landing.alert };
    if (landing.heading === HEADINGS.login && landing.alert?.includes('Trop d’essais')) {
      // Wrong codes typed by a person: the run was real (business, not refunded).
      throw new RobotError('business', 'mfa_rejected', `The sandbox portal refused the MFA codes: ${landing.alert}`);
    }
    if (landing.heading === HEADINGS.login && landing.alert?.includes('code a expiré')) {
      throw new RobotError('technical', 'mfa_timeout', `The MFA code came too late: ${landing.alert}`);
    }
    throw this.portal.unexpected(landing, 'entering the MFA code');
  }
}
