import { RobotError, type InsurerCredentials } from '@courtier/adapter-kit';
import { HEADINGS, type PortalSession } from '../page-driver.js';
import { PAGES } from './expectations.js';

/** The portal's login page: "Identifiant courtier", "Mot de passe", "Se connecter". */
export class LoginPage {
  constructor(private readonly portal: PortalSession) {}

  /** Opens the login page (a login check's page is never resumed). 'home' when the portal went straight to its home page. */
  async open(): Promise<'login' | 'home'> {
    const landing = await this.portal.open('/login');
    if (landing.heading === HEADINGS.home) return 'home';
    if (landing.heading !== HEADINGS.login) throw this.portal.unexpected(landing, 'opening the login page');
    return 'login';
  }

  /**
   * Opens a page behind the login. 'open' when it shows: the page is the login's previous job's,
   * whose portal session is still open, and there is nothing to type. 'login' when the portal sent
   * the robot to its login form instead.
   */
  async openSignedIn(path: string): Promise<'open' | 'login'> {
    const landing = await this.portal.open(path);
    if (landing.heading === HEADINGS.login) return 'login';
    // Anything else is the product's first step, which checks its page before typing (portal_changed).
    return 'open';
  }

  /** Logs in from the login form; says whether the portal now asks for an SMS code. */
  async logIn(credentials: InsurerCredentials): Promise<'home' | 'mfa'> {
    await this.portal.expectPage(PAGES.login);
    await this.portal.fill('Identifiant courtier', credentials.login);
    // The password is typed and submitted untraced.
    const landing = await this.portal.withSecrets([credentials.password], async () => {
      await this.portal.fill('Mot de passe', credentials.password);
      return this.portal.navigate('the button "Se connecter"', this.portal.page.getByRole('button', { name: 'Se connecter', exact: true }));
    });
    if (landing.heading === HEADINGS.home) return 'home';
    if (landing.heading === HEADINGS.mfa) return 'mfa';
    if (landing.heading === HEADINGS.login && landing.alert?.includes('Identifiant ou mot de passe incorrect')) {
      // The broker's stored password is wrong: their data, not an outage (no refund, breaker untouched).
      throw new RobotError('business', 'invalid_credentials', `The sandbox portal refused the login: ${landing.alert}`);
    }
    throw this.portal.unexpected(landing, 'logging in');
  }
}
