import { useEffect, useState, type ReactNode } from 'react';
import type { Client } from '../../../../shared/crm.js';
import { validationIssueSchema } from '../../../../shared/errors.js';
import type { ApiFailure } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import type { RecordsStrings } from './strings.js';

type PageAnswer<T> = { ok: true; data: { data: T[]; next_cursor: string | null } } | ApiFailure;

/**
 * A list read a page at a time: the first page whenever `page` changes (an answer to an older
 * `page` is dropped), then the next one on demand.
 */
export function usePagedList<T>(page: (cursor?: string) => Promise<PageAnswer<T>>) {
  const [items, setItems] = useState<T[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    void page().then((result) => {
      if (cancelled) return;
      if (!result.ok) return setError(result.error.message);
      setError(null);
      setItems(result.data.data);
      setNextCursor(result.data.next_cursor);
    });
    return () => {
      cancelled = true;
    };
  }, [page]);

  async function loadMore() {
    if (!nextCursor) return;
    const result = await page(nextCursor);
    if (!result.ok) return setError(result.error.message);
    setItems((current) => [...(current ?? []), ...result.data.data]);
    setNextCursor(result.data.next_cursor);
  }

  return { items, setItems, error, setError, hasMore: nextCursor !== null, loadMore };
}

/** The console path of a client's page. */
export function clientPath(clientId: string): string {
  return `/console/clients/${encodeURIComponent(clientId)}`;
}

/** The console path of an opportunity's page. */
export function opportunityPath(opportunityId: string): string {
  return `/console/opportunities/${encodeURIComponent(opportunityId)}`;
}

/** The id after `/console/<area>/` in the address bar, if any (the shell serves every /console/* path). */
export function idInPath(area: string): string | null {
  const rest = window.location.pathname.replace(/\/+$/, '').slice(`/console/${area}/`.length);
  return window.location.pathname.startsWith(`/console/${area}/`) && rest !== '' ? decodeURIComponent(rest) : null;
}

/** How a person reads a client's name: a company's name, or first and last name. */
export function clientName(client: Pick<Client, 'type' | 'last_name' | 'first_name' | 'company_name'>, s: RecordsStrings): string {
  if (client.type === 'company' && client.company_name) return client.company_name;
  return [client.first_name, client.last_name].filter((part) => part).join(' ') || s.unnamed;
}

/** A failed call's message, and the problem of each form field its validation details name, in words. */
export interface FormError {
  message: string;
  fields: Record<string, string>;
}

/**
 * The form field a problem is about: the body field ("body.last_name" → last_name), or, inside an
 * object the form shows as fields of its own (an address, an opportunity's contact), the inner one
 * ("body.address.postcode" → postcode).
 */
function formFieldOf(path: string): string {
  const parts = path.replace(/^body\./, '').split('.');
  return (parts[0] === 'address' || parts[0] === 'contact') && parts[1] !== undefined ? parts[1] : (parts[0] ?? '');
}

/** The failure as a form shows it: each field's problem worded from its code in the console's language, never the validator's text. */
export function formError(failure: ApiFailure, lang: Lang): FormError {
  const fields: Record<string, string> = {};
  const details = validationIssueSchema.array().safeParse(failure.error.details);
  if (failure.error.error === 'validation_error' && details.success) {
    for (const issue of details.data) fields[formFieldOf(issue.path)] ??= describeIssue(issue, lang);
  }
  return { message: failure.error.message, fields };
}

/** A polite status line (what just happened), read out by screen readers. */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="records-notice" role="status">
      {children}
    </p>
  );
}
