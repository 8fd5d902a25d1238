import { RobotError, type InsurerCredentials, type RobotContext } from '@courtier/adapter-kit';
import type { SpaSession } from '../spa-driver.js';
import { HEADINGS, PAGES } from './expectations.js';

/** The portal lets the app ask again while a request is pending; the robot asks a person at most this often. */
const MAX_APPROVAL_ASKS = 3;

/**
 * The door of the app: its login screen, then, for an account that requires it, the approval in the
 * Horizon app (the robot sends the request, a person approves it on their phone, the app polls).
 */
export class SignIn {
  constructor(private readonly spa: SpaSession) {}

  /** Opens the app's dashboard: 'home' when the session is still signed in, else the screen it shows. */
  async openHome(): Promise<'home' | 'login' | 'approval'> {
    const heading = await this.spa.open('/app/accueil');
    if (heading === HEADINGS.home) return 'home';
    if (heading === HEADINGS.approval) return 'approval';
    if (heading === HEADINGS.login) return 'login';
    await this.spa.expectPage(PAGES.login);
    return 'login';
  }

  /** Types the credentials: 'home', or 'approval' when the account waits for an approval in the app. */
  async logIn(credentials: InsurerCredentials): Promise<'home' | 'approval'> {
    await this.spa.expectPage(PAGES.login);
    const answer = await this.spa.withSecrets([credentials.password], async () => {
      await this.spa.fill('Identifiant', credentials.login);
      await this.spa.fill('Mot de passe', credentials.password);
      return this.spa.call('the login', { method: 'POST', path: /^\/session$/ }, () =>
        this.spa.act('the button "Se connecter"', (o) => this.spa.page.getByRole('button', { name: 'Se connecter', exact: true }).click(o)),
      );
    });
    if (answer.status === 401) throw new RobotError('business', 'invalid_credentials', 'Horizon Direct refused the login and password.');
    const state = (answer.body as { state?: unknown } | null)?.state;
    if (answer.status !== 200 || (state !== 'connected' && state !== 'approval_required'))
      throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the login with ${answer.status}.`);
    return state === 'connected' ? 'home' : 'approval';
  }

  /**
   * The approval in the Horizon app: checks that a person is there before the portal pushes the
   * request to a phone, asks them to approve, then checks the portal; asks again while it is still
   * pending, at most 3 times.
   */
  async approve(ctx: RobotContext): Promise<void> {
    await this.spa.expectPage(PAGES.approval);
    if (!ctx.humanPresent)
      throw new RobotError(
        'technical',
        'human_required',
        'Horizon Direct asks for an approval in its app, and nobody is there to give it.',
      );
    const instructions = await this.spa.act('the approval instructions', (o) =>
      this.spa.page.getByText('Validez la connexion dans l’application Horizon', { exact: false }).first().innerText(o),
    );
    const sent = await this.spa.call('the approval request', { method: 'POST', path: /^\/session\/approval$/ }, () =>
      this.spa.act('the button "Envoyer la demande"', (o) =>
        this.spa.page.getByRole('button', { name: 'Envoyer la demande', exact: true }).click(o),
      ),
    );
    if (sent.status !== 202)
      throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the approval request with ${sent.status}.`);
    let prompt = `${instructions.trim()} La demande vient d’être envoyée au téléphone du cabinet.`;
    for (let ask = 1; ask <= MAX_APPROVAL_ASKS; ask++) {
      await this.spa.abortable(ctx.askHuman({ kind: 'app_approval', prompt }));
      const status = await this.portalApproval();
      if (status === 'approved') return this.spa.expectPage(PAGES.home);
      if (status === 'expired')
        throw new RobotError('technical', 'mfa_timeout', 'The approval request expired in the Horizon app before it was approved.');
      prompt = `La connexion n’est pas encore validée dans l’application Horizon (essai ${ask} sur ${MAX_APPROVAL_ASKS}). Approuvez la demande sur le téléphone, puis confirmez.`;
    }
    throw new RobotError('business', 'approval_refused', 'The login was never approved in the Horizon app.');
  }

  /** What the portal says now: the app's next poll of the approval, or its dashboard if it moved on already. */
  private async portalApproval(): Promise<'approved' | 'pending' | 'expired'> {
    if ((await this.spa.heading()) === HEADINGS.home) return 'approved';
    const poll = this.spa.answerTo({ method: 'GET', path: /^\/session\/approval$/ });
    const home = this.spa.page.getByRole('heading', { level: 1, name: HEADINGS.home }).waitFor({ timeout: this.spa.timeouts.actionMs });
    home.catch(() => undefined);
    const status = await Promise.race([
      this.spa.awaitAnswer('the approval check', poll).then((a) => (a.body as { status?: unknown } | null)?.status),
      home.then(() => 'approved'),
    ]);
    if (status === 'approved' || status === 'expired' || status === 'pending') return status;
    throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the approval check with ${JSON.stringify(status)}.`);
  }
}
