import { readFile } from 'node:fs/promises';
import type { PortalSession } from '../page-driver.js';

/**
 * Clicks a link that downloads a PDF and reads the file. Null when no download came, it failed,
 * or it is not a PDF: the caller returns a partial result (priced, no PDF) rather than failing.
 */
export async function downloadPdf(portal: PortalSession, linkName: string): Promise<Buffer | null> {
  portal.throwIfAborted();
  const page = portal.page;
  const started = page.waitForEvent('download', { timeout: portal.timeouts.downloadMs, signal: portal.signal });
  started.catch(() => undefined);
  try {
    await page.getByRole('link', { name: linkName, exact: true }).click({ timeout: portal.timeouts.actionMs, signal: portal.signal });
    const download = await started;
    try {
      const path = await download.path(); // waits for the end of the download; throws if it failed
      const bytes = await readFile(path);
      return bytes.subarray(0, 5).toString('latin1') === '%PDF-' ? bytes : null;
    } finally {
      // The service stores the PDF; the browser's copy does not wait for the context to close
      // (a resumed session may live on for several jobs).
      await download.delete().catch(() => undefined);
    }
  } catch {
    portal.throwIfAborted();
    return null;
  }
}
