import { RobotError, type PageExpectation } from '@courtier/adapter-kit';
import type { ApiAnswer, SpaSession } from '../spa-driver.js';
import type { CarQuoteData, HomeQuoteData } from '../products.js';
import { PAGES } from './expectations.js';

/** One field of a step as the robot fills it: by its label, with the value as the app wants it typed. */
type Entry =
  | { label: string; kind: 'text'; value: string }
  | { label: string; kind: 'select'; value: string }
  | { label: string; kind: 'checkbox'; value: boolean };

const text = (label: string, value: string | number | undefined): Entry => ({
  label,
  kind: 'text',
  value: value === undefined ? '' : frenchNumber(value),
});

/** "2022-04-01" → "01/04/2022": the app's date fields are typed the French way. */
function frenchDate(iso: string): string {
  const [y, m, d] = iso.split('-');
  return `${d}/${m}/${y}`;
}

/** Numbers with a decimal comma, as a person types them. */
function frenchNumber(value: string | number): string {
  return typeof value === 'number' ? String(value).replace('.', ',') : value;
}

/** The answer that ended a step: the app's next state, its refusal, or a step the robot cannot go on from. */
type StepOutcome = { kind: 'answer'; answer: ApiAnswer } | { kind: 'refused'; message: string };

/**
 * The quote wizard: the dashboard's button opens a quote, then each step's screen is checked, filled
 * and sent; every step goes to the same API endpoint, whose answer (or the app's own check of the
 * form, which sends nothing) tells the robot what happened.
 */
export class QuoteWizard {
  constructor(private readonly spa: SpaSession) {}

  async open(product: 'voiture' | 'logement'): Promise<void> {
    await this.spa.expectPage(PAGES.home);
    const name = product === 'voiture' ? 'Nouveau devis auto' : 'Nouveau devis habitation';
    const created = await this.spa.call('the new quote', { method: 'POST', path: /^\/quotes$/ }, () =>
      this.spa.act(`the button "${name}"`, (o) => this.spa.page.getByRole('button', { name, exact: true }).click(o)),
    );
    if (created.status !== 201)
      throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the new quote with ${created.status}.`);
  }

  carSteps(data: CarQuoteData): { page: PageExpectation; entries: Entry[] }[] {
    return [
      {
        page: PAGES.carDriver,
        entries: [
          text('Prénom', data.prenom),
          text('Nom', data.nom),
          text('Date de naissance du conducteur', frenchDate(data.date_naissance_conducteur)),
          text('Année d’obtention du permis', data.annee_permis),
          text('Coefficient bonus-malus (CRM)', data.crm),
          text('Sinistres sur 36 mois', data.sinistres_36_mois),
          text('Code postal du garage', data.code_postal_garage),
        ],
      },
      {
        page: PAGES.carVehicle,
        entries: [
          text('Marque', data.marque),
          text('Modèle', data.modele),
          text('Date de mise en circulation', frenchDate(data.date_mec)),
          { label: 'Kilométrage annuel', kind: 'select', value: data.kilometrage_annuel },
          { label: 'Stationnement la nuit', kind: 'select', value: data.stationnement },
        ],
      },
    ];
  }

  homeSteps(data: HomeQuoteData): { page: PageExpectation; entries: Entry[] }[] {
    return [
      {
        page: PAGES.homeProperty,
        entries: [
          text('Prénom', data.prenom),
          text('Nom', data.nom),
          { label: 'Type de bien', kind: 'select', value: data.type_bien },
          { label: 'Vous êtes', kind: 'select', value: data.qualite },
          text('Code postal du bien', data.code_postal),
        ],
      },
      {
        page: PAGES.homeRooms,
        entries: [
          text('Surface habitable (m²)', data.surface),
          text('Nombre de pièces principales', data.nb_pieces_principales),
          text('Étage (appartement)', data.etage),
          text('Valeur du mobilier (€)', data.valeur_mobilier),
          { label: 'Alarme anti-intrusion', kind: 'checkbox', value: data.alarme },
        ],
      },
    ];
  }

  /** Checks the step's screen, fills it; the caller then sends it with `send`. */
  async fill(step: { page: PageExpectation; entries: Entry[] }): Promise<void> {
    await this.spa.expectPage(step.page);
    for (const entry of step.entries) {
      if (entry.kind === 'text') await this.spa.fill(entry.label, entry.value);
      else if (entry.kind === 'select') await this.spa.select(entry.label, entry.value);
      else await this.spa.setChecked(entry.label, entry.value);
    }
  }

  /**
   * Clicks the step's button ("Continuer", "Voir les tarifs") and returns the API's answer. The app
   * refusing the form itself, or the API answering 422, is the data refused (business), with the
   * fields' messages.
   */
  async send(step: { page: PageExpectation }, buttonName: string): Promise<ApiAnswer> {
    const answered = this.spa.answerTo({ method: 'POST', path: /^\/quotes\/[0-9a-f]+\/steps$/ });
    const refusedInPage = this.spa.page.getByRole('alert').first().waitFor({ timeout: this.spa.timeouts.actionMs });
    refusedInPage.catch(() => undefined);
    await this.spa.act(`the button "${buttonName}"`, (o) => this.spa.page.getByRole('button', { name: buttonName, exact: true }).click(o));
    const outcome: StepOutcome = await Promise.race([
      this.spa.awaitAnswer(`the step "${step.page.step}"`, answered).then((answer): StepOutcome => ({ kind: 'answer', answer })),
      refusedInPage.then(async (): Promise<StepOutcome> => ({ kind: 'refused', message: await this.fieldErrors() })),
    ]);
    if (outcome.kind === 'refused') throw new RobotError('business', 'data_refused', outcome.message);
    const { answer } = outcome;
    if (answer.status === 422) {
      await refusedInPage.catch(() => undefined);
      throw new RobotError('business', 'data_refused', await this.fieldErrors());
    }
    if (answer.status !== 200)
      throw new RobotError('technical', 'layout_changed', `Horizon Direct answered the step "${step.page.step}" with ${answer.status}.`);
    return answer;
  }

  /** "Label : message" for each field the app marks invalid. */
  private async fieldErrors(): Promise<string> {
    const page = this.spa.page;
    const summary = await this.spa.act('the error summary', (o) => page.getByRole('alert').first().innerText(o));
    const invalid = await page.locator('[aria-invalid="true"]').all();
    const messages: string[] = [];
    for (const input of invalid) {
      const id = await input.getAttribute('id');
      const label = id ? await page.locator(`label[for="${id}"]`).innerText() : '';
      const describedBy = await input.getAttribute('aria-describedby');
      const message = describedBy ? await page.locator(`[id="${describedBy}"]`).innerText() : '';
      messages.push(`${label.trim()} : ${message.trim()}`);
    }
    return `Horizon Direct refuses the data: ${summary.trim()}${messages.length > 0 ? ` ${messages.join(' ; ')}` : ''}`;
  }
}
