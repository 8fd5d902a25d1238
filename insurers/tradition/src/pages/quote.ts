import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { normaliseSpaces, parseEuros, RobotError } from '@courtier/adapter-kit';
import type { TraditionDriver } from '../driver.js';
import { PAGES } from './expectations.js';

const PDF_LINK = 'Télécharger le devis (PDF)';

/**
 * "Votre devis", in the main frame: the premium in a table (row headers), and the PDF, which the
 * portal prepares after a while ("Votre devis est en cours de préparation"): the robot refreshes
 * the page, a bounded number of times, until its link shows.
 */
export class QuotePage {
  constructor(private readonly driver: TraditionDriver) {}

  async premium(): Promise<number> {
    const { driver } = this;
    await driver.expect(PAGES.quote, 'frame');
    const cell = driver
      .mainFrame()
      .getByRole('row', { name: /^Prime annuelle TTC/ })
      .getByRole('cell');
    const text = normaliseSpaces(await driver.act('the premium (Prime annuelle TTC)', (o) => cell.innerText(o)));
    const premium = parseEuros(text);
    if (premium === null) throw new RobotError('technical', 'layout_changed', `The premium "${text}" is not an amount in euros.`);
    return premium;
  }

  /** Refreshes until the PDF link shows (at most `maxRefreshes` times); false if it never did. */
  async waitForPdf(maxRefreshes: number, intervalMs: number): Promise<boolean> {
    const { driver } = this;
    for (let refresh = 0; ; refresh++) {
      const frame = driver.mainFrame();
      if ((await driver.act('the PDF link', () => frame.getByRole('link', { name: PDF_LINK, exact: true }).count())) > 0) return true;
      if (refresh >= maxRefreshes) return false;
      if (intervalMs > 0) await sleep(intervalMs, undefined, { signal: driver.signal }).catch(() => driver.throwIfAborted());
      const landing = await driver.navigate('the link "Actualiser"', frame.getByRole('link', { name: 'Actualiser', exact: true }), 'frame');
      if (landing.heading !== PAGES.quote.landmarks[0].name) throw driver.unexpected(landing, 'waiting for the PDF');
    }
  }

  /** Clicks the PDF link and reads the download; null when none came or it is not a PDF. */
  async downloadPdf(): Promise<Buffer | null> {
    const { driver } = this;
    driver.throwIfAborted();
    const started = driver.page.waitForEvent('download', { timeout: driver.timeouts.downloadMs });
    started.catch(() => undefined);
    try {
      await driver.mainFrame().getByRole('link', { name: PDF_LINK, exact: true }).click({ timeout: driver.timeouts.actionMs });
      const download = await started;
      try {
        const bytes = await readFile(await download.path());
        return bytes.subarray(0, 5).toString('latin1') === '%PDF-' ? bytes : null;
      } finally {
        await download.delete().catch(() => undefined);
      }
    } catch {
      driver.throwIfAborted();
      return null;
    }
  }
}
