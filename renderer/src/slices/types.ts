import type { ComponentType } from 'react';
import type { ConsoleSession } from '../../../shared/oauth.js';
import type { Lang, Strings } from '../i18n.js';

/** What every console page and overlay gets from the shell. */
export interface PageProps {
  lang: Lang;
  /** The shell's strings; a page keeps its own words in its own file, in both languages. */
  t: Strings;
  session: ConsoleSession;
}

/** A page of the signed-in console, reached at `path` and listed in the navigation. */
export interface ConsolePage {
  path: `/console/${string}`;
  label: Record<Lang, string>;
  /** Hidden from brokers (the server refuses them anyway). */
  adminOnly?: boolean;
  /** A page of a broker's day (pricing, jobs, records): in the menu's first row; the others go under "Cabinet". */
  daily?: boolean;
  /** false: reached from elsewhere (the header's search), not listed in the menu. */
  inMenu?: false;
  component: ComponentType<PageProps>;
}

/** A page shown without a session (first-run setup). */
export interface PublicPage {
  path: `/console/${string}`;
  title: Record<Lang, string>;
  component: ComponentType<{ lang: Lang; t: Strings }>;
}

/**
 * One area of the console: its pages, what it shows over every page (the MFA prompt), and what it
 * shows in the header of every page (the sync status), for every signed-in user.
 */
export interface ConsoleSlice {
  pages: readonly ConsolePage[];
  publicPages?: readonly PublicPage[];
  overlays?: readonly ComponentType<PageProps>[];
  headerItems?: readonly ComponentType<PageProps>[];
  /** What waits for a person in this slice (a hook: called on every render), counted on `page`'s menu link and in the tab's title. */
  attention?: { page: ConsolePage['path']; useCount: () => number };
}
