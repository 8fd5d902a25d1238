import { AuditPage } from '../pages/office/AuditPage.js';
import { OfficeNetworkPage } from '../pages/office/OfficeNetworkPage.js';
import { OFFICE_STRINGS } from '../pages/office/strings.js';
import type { ConsoleSlice } from './types.js';
import './office.css';

const { en, fr } = OFFICE_STRINGS;

/** The office slice (admins): sharing on the office network (LAN mode) and the audit log. */
export const officeSlice: ConsoleSlice = {
  pages: [
    { path: '/console/office-network', label: { en: en.navNetwork, fr: fr.navNetwork }, adminOnly: true, component: OfficeNetworkPage },
    { path: '/console/audit', label: { en: en.navAudit, fr: fr.navAudit }, adminOnly: true, component: AuditPage },
  ],
};
