import { z } from 'zod';

/**
 * What the desktop app's preload answers to `window.courtierDesktop.getStatus()` (only inside the
 * desktop app; the console must work without it).
 */
export const desktopStatusSchema = z.object({
  version: z.string(),
  /** Where insurer passwords are kept: the OS keychain, or the encrypted file store (fallback). */
  secret_store: z.enum(['keychain', 'encrypted-file']).nullable(),
  /** Problems the console shows in a banner (keychain fallback, invalid IT policy). */
  warnings: z.array(z.string()),
  /** Settings decided by the IT policy (shown as locked). */
  managed: z.array(z.string()),
  robots_headed: z.boolean(),
});
export type DesktopStatus = z.infer<typeof desktopStatusSchema>;
