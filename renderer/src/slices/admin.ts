import { AccountPage, PasswordChangeGate } from '../pages/admin/AccountPage.js';
import { AppsPage } from '../pages/admin/AppsPage.js';
import { KeysPage } from '../pages/admin/KeysPage.js';
import { RobotsPausedBanner } from '../pages/admin/RobotsPaused.js';
import { SettingsPage } from '../pages/admin/SettingsPage.js';
import { SetupPage } from '../pages/admin/SetupPage.js';
import { ADMIN_STRINGS } from '../pages/admin/strings.js';
import { UsersPage } from '../pages/admin/UsersPage.js';
import { WalletPage } from '../pages/admin/WalletPage.js';
import type { ConsoleSlice } from './types.js';
import './admin.css';

const { en, fr } = ADMIN_STRINGS;

/** The admin slice: first-run setup, API keys, connected apps, wallet and status, users, settings, one's own account. */
export const adminSlice: ConsoleSlice = {
  pages: [
    { path: '/console/keys', label: { en: en.navKeys, fr: fr.navKeys }, adminOnly: true, component: KeysPage },
    { path: '/console/apps', label: { en: en.navApps, fr: fr.navApps }, component: AppsPage },
    { path: '/console/wallet', label: { en: en.navWallet, fr: fr.navWallet }, component: WalletPage },
    { path: '/console/users', label: { en: en.navUsers, fr: fr.navUsers }, adminOnly: true, component: UsersPage },
    { path: '/console/settings', label: { en: en.navSettings, fr: fr.navSettings }, adminOnly: true, component: SettingsPage },
    { path: '/console/account', label: { en: en.navAccount, fr: fr.navAccount }, component: AccountPage },
  ],
  overlays: [PasswordChangeGate, RobotsPausedBanner],
  publicPages: [{ path: '/console/setup', title: { en: en.setupTitle, fr: fr.setupTitle }, component: SetupPage }],
};
