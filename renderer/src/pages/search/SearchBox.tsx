import { useId, useState, type FormEvent } from 'react';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { SEARCH_STRINGS } from './strings.js';

export const SEARCH_PATH = '/console/search';

/** The search path for a text. */
export function searchUrl(q: string): string {
  return `${SEARCH_PATH}?q=${encodeURIComponent(q)}`;
}

/** In the header of every page: a text, and Enter opens its results. */
export function SearchBox({ lang }: PageProps) {
  const s = SEARCH_STRINGS[lang];
  const inputId = useId();
  const [text, setText] = useState('');

  function submit(event: FormEvent) {
    event.preventDefault();
    go(searchUrl(text.trim()));
  }

  return (
    <form role="search" aria-label={s.searchLabel} className="header-search" onSubmit={submit}>
      <label htmlFor={inputId} className="visually-hidden">
        {s.searchLabel}
      </label>
      <input id={inputId} type="search" value={text} placeholder={s.placeholder} onChange={(e) => setText(e.target.value)} />
      <button type="submit" className="button">
        {s.go}
      </button>
    </form>
  );
}
