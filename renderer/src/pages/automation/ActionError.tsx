import { useEffect, useRef } from 'react';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { jobPath } from './jobView.js';
import { AUTOMATION_STRINGS } from './strings.js';

/** A refusal as a form keeps it: the sentence, and the code and details its links come from. */
export interface ShownError {
  message: string;
  code?: string;
  details?: unknown;
}

/** What a refusal refers to, as a link: the earlier pricing, the page where credits are added, the insurers' logins. */
function linkOf(error: ShownError, lang: Lang): { href: string; label: string } | null {
  const s = AUTOMATION_STRINGS[lang];
  const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : {};
  if (error.code === 'rpa_replay_detected' && typeof details.job_id === 'string')
    return { href: jobPath(details.job_id), label: s.earlierPricingLink };
  if (error.code === 'credits_exhausted' || error.code === 'offline_allowance_exhausted')
    return { href: '/console/wallet', label: s.walletLink };
  if (error.code === 'insurer_credentials_missing') return { href: '/console/insurers', label: s.noCredentialsLink };
  return null;
}

/**
 * A form's refusal where the person is: beside its buttons, taking the focus when it appears (so
 * that a keyboard or a screen reader is there too), with a link to what it refers to.
 */
export function ActionError({ error, lang }: { error: ShownError | null; lang: Lang }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) ref.current?.focus();
  }, [error]);
  if (!error) return null;
  const link = linkOf(error, lang);
  return (
    <div ref={ref} tabIndex={-1} className="automation-action-error">
      <Alert>
        {error.message}
        {link && (
          <>
            {' '}
            <a href={link.href}>{link.label}</a>
          </>
        )}
      </Alert>
    </div>
  );
}
