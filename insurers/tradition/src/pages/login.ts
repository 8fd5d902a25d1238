import { RobotError, type InsurerCredentials, type RobotContext } from '@courtier/adapter-kit';
import { TEXTS, type Landing, type TraditionDriver } from '../driver.js';
import { PAGES } from './expectations.js';

/** The portal allows 3 captchas per login; the robot never asks a person more often than that. */
const MAX_CAPTCHA_ATTEMPTS = 3;

/**
 * The extranet's door, in the whole window: "Code partenaire", "Mot de passe", "Connexion", then
 * for some accounts a captcha ("Contrôle de sécurité") whose image a person reads.
 */
export class LoginPage {
  constructor(
    private readonly driver: TraditionDriver,
    private readonly ctx: Pick<RobotContext, 'askHuman' | 'progress'>,
  ) {}

  /** Logs in from the login form the window shows; resolves once the frameset shows. */
  async logIn(credentials: InsurerCredentials): Promise<void> {
    const landing = await this.submitPassword(credentials);
    if (landing.where === 'frame') return;
    if (landing.heading === TEXTS.captcha) return this.solveCaptcha();
    throw this.driver.unexpected(landing, 'logging in');
  }

  /** Types the login and password; says where the portal went (the frameset, or its captcha). */
  async submitPassword(credentials: InsurerCredentials): Promise<Landing> {
    const { driver } = this;
    await driver.expect(PAGES.login, 'top');
    await driver.fill(driver.page, 'Code partenaire', credentials.login);
    const landing = await driver.withSecrets([credentials.password], async () => {
      await driver.fill(driver.page, 'Mot de passe', credentials.password);
      return driver.navigate('the button "Connexion"', driver.page.getByRole('button', { name: 'Connexion', exact: true }), 'top');
    });
    if (landing.heading === TEXTS.login && landing.alert?.includes('mot de passe incorrect'))
      throw new RobotError('business', 'invalid_credentials', `The Tradition portal refused the login: ${landing.alert}`);
    return landing;
  }

  private async solveCaptcha(): Promise<void> {
    const { driver } = this;
    this.ctx.progress('security check', 15);
    let message: string | null = null;
    for (let attempt = 1; attempt <= MAX_CAPTCHA_ATTEMPTS; attempt++) {
      await driver.expect(PAGES.captcha, 'top');
      const image = await this.captchaImage();
      const prompt = `${message ? `${message} ` : ''}Mutuelle Tradition demande de recopier les 5 caractères de l’image.`;
      const text = await driver.abortable(
        this.ctx.askHuman({ kind: 'captcha', prompt, image: { mime: 'image/png', base64: image.toString('base64') } }),
      );
      await driver.fill(driver.page, 'Code de sécurité', text.trim());
      const landing = await driver.navigate(
        'the button "Valider"',
        driver.page.getByRole('button', { name: 'Valider', exact: true }),
        'top',
      );
      if (landing.where === 'frame') return;
      if (landing.heading !== TEXTS.captcha) break;
      message = landing.alert;
    }
    throw new RobotError('business', 'captcha_rejected', 'The Tradition portal refused every captcha answer given.');
  }

  /** The captcha image's bytes, fetched with the browser's cookies (the image belongs to this login). */
  private async captchaImage(): Promise<Buffer> {
    const { driver } = this;
    const src = await driver.act('the captcha image', (o) =>
      driver.page.getByRole('img', { name: 'Code de sécurité' }).getAttribute('src', o),
    );
    if (!src) throw new RobotError('technical', 'layout_changed', 'The captcha image has no address.');
    const response = await driver.act('the captcha image', (o) =>
      driver.page.context().request.get(new URL(src, driver.page.url()).href, o),
    );
    const body = await response.body();
    if (!response.ok() || body.subarray(1, 4).toString('latin1') !== 'PNG')
      throw new RobotError('technical', 'layout_changed', `The captcha image is not a PNG (HTTP ${response.status()}).`);
    return body;
  }
}
