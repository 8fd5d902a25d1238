import { SYNC_PAGE_PATH, SyncIndicator } from '../pages/sync/SyncIndicator.js';
import { SyncPage } from '../pages/sync/SyncPage.js';
import { SYNC_STRINGS } from '../pages/sync/strings.js';
import type { ConsoleSlice } from './types.js';
import './sync.css';

const { en, fr } = SYNC_STRINGS;

/** The cabinet's sync with its hub: the Sync page for administrators, and the header's status for everyone. */
export const syncSlice: ConsoleSlice = {
  pages: [{ path: SYNC_PAGE_PATH, label: { en: en.nav, fr: fr.nav }, adminOnly: true, component: SyncPage }],
  headerItems: [SyncIndicator],
};
