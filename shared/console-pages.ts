import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/**
 * The console's own pages, off the service's root: the single-page app, its files, and the
 * desktop shell's one-time sign-in. A path ending in {name*} takes the rest of the URL.
 */
const TAG = 'Console pages';
const HTML = 'text/html';

export const CONSOLE_HOME = '/console/';

export const openRoot = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/',
  operationId: 'openRoot',
  summary: 'The service’s root: to the console',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 302: { description: `To ${CONSOLE_HOME}.` } },
  errors: [],
});

export const openConsoleWithoutSlash = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/console',
  operationId: 'openConsoleWithoutSlash',
  summary: 'The console without its trailing slash',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 308: { description: `To ${CONSOLE_HOME}, query kept.` } },
  errors: [],
});

export const getConsoleAsset = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/console/assets/{file*}',
  operationId: 'getConsoleAsset',
  summary: 'A file of the console’s build (script, style, image), cached for a year',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
  errors: ['not_found'],
});

export const openConsolePage = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/console/{page*}',
  operationId: 'openConsolePage',
  summary: 'Any console page (the single-page app decides what it shows)',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: {
    200: { description: 'The console’s page.', contentType: HTML },
    503: { description: 'The console was not built (npm run build).', contentType: HTML },
  },
  errors: [],
});

const DESKTOP_LOGIN_PATH = '/console/desktop-login';

export const desktopSignIn = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: DESKTOP_LOGIN_PATH,
  operationId: 'desktopSignIn',
  summary: 'The desktop shell’s one-time sign-in (this machine only)',
  description:
    'As the first cabinet’s first admin, then 302 to the console (or to return_to, a console path). With no cabinet yet, 302 to first-run setup. Any failure (no token, unknown, used, expired, not from this machine) is a plain 302 to the sign-in page.',
  tag: TAG,
  auth: 'none',
  query: z.object({ token: z.string().min(16).max(256), return_to: z.string().optional() }),
  // Every failure is the same redirect to the sign-in page, never a 400.
  validatedBy: 'handler',
  responses: { 302: { description: 'To the console, setup, or the sign-in page.' } },
  errors: [],
});

export const CONSOLE_PAGE_ENDPOINTS = [openRoot, openConsoleWithoutSlash, getConsoleAsset, openConsolePage, desktopSignIn] as const;
