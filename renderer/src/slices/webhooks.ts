import { WebhooksPage } from '../pages/webhooks/WebhooksPage.js';
import type { ConsoleSlice } from './types.js';
import './webhooks.css';

export const webhooksSlice: ConsoleSlice = {
  pages: [{ path: '/console/webhooks', label: { en: 'Webhooks', fr: 'Webhooks' }, adminOnly: true, component: WebhooksPage }],
};
