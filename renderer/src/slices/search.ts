import { SEARCH_PATH, SearchBox } from '../pages/search/SearchBox.js';
import { SearchPage } from '../pages/search/SearchPage.js';
import { SEARCH_STRINGS } from '../pages/search/strings.js';
import './search.css';
import type { ConsoleSlice } from './types.js';

const { en, fr } = SEARCH_STRINGS;

/** The search of the cabinet's records: a box in every page's header, and its results page. */
export const searchSlice: ConsoleSlice = {
  pages: [{ path: SEARCH_PATH, label: { en: en.title, fr: fr.title }, inMenu: false, component: SearchPage }],
  headerItems: [SearchBox],
};
