import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { Job } from '../../../../shared/automation.js';
import { acknowledgeConsoleMfa, answerConsoleMfa, listInsurers, waitsForCode } from '../../../../shared/console-automation.js';
import { call } from '../../api.js';
import type { PageProps } from '../../slices/types.js';
import { subscribeToJobs } from './jobFeed.js';
import { AUTOMATION_STRINGS, formatTime, shortId, type AutomationStrings } from './strings.js';

/**
 * Shown over every signed-in page: one dialog per job of the cabinet that waits for an MFA code,
 * from the live feed. Answered here or in another console, or timed out, the job leaves the
 * waiting state and the feed removes the prompt everywhere.
 */
export function MfaPrompts({ lang }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  const [waiting, setWaiting] = useState<Map<string, Job>>(new Map());
  const [names, setNames] = useState<Record<string, string>>({});
  const seen = useRef(new Set<string>());
  const namesAsked = useRef(false);

  useEffect(
    () =>
      subscribeToJobs({
        job(job) {
          setWaiting((current) => {
            const wants = waitsForCode(job);
            if (!wants && !current.has(job.job_id)) return current;
            const next = new Map(current);
            if (wants) next.set(job.job_id, job);
            else next.delete(job.job_id);
            return next;
          });
        },
        ready(unfinished) {
          // After a reconnection: a prompt for a job that finished meanwhile goes.
          const keep = new Set(unfinished);
          setWaiting((current) => new Map([...current].filter(([id]) => keep.has(id))));
        },
      }),
    [],
  );

  useEffect(() => {
    for (const job of waiting.values()) {
      // Tell the server a person sees the prompt (mfa_required → awaiting_mfa), once per job here.
      if (job.status === 'mfa_required' && !seen.current.has(job.job_id)) {
        seen.current.add(job.job_id);
        void call(acknowledgeConsoleMfa, { params: { job_id: job.job_id } });
      }
    }
    if (waiting.size > 0 && !namesAsked.current) {
      namesAsked.current = true;
      void (async () => {
        const result = await call(listInsurers);
        if (result.ok) setNames(Object.fromEntries(result.data.data.map((i) => [i.code, i.name])));
      })();
    }
  }, [waiting]);

  if (waiting.size === 0) return null;
  const prompts = [...waiting.values()].sort((a, b) => (a.mfa?.requested_at ?? '').localeCompare(b.mfa?.requested_at ?? ''));
  return (
    <div className="automation-mfa-stack">
      {prompts.map((job) => (
        <MfaPrompt
          key={job.job_id}
          job={job}
          insurer={names[job.ran_on] ?? names[job.compagnie] ?? job.compagnie}
          s={s}
          lang={lang}
          onAnswered={() =>
            setWaiting((current) => {
              const next = new Map(current);
              next.delete(job.job_id);
              return next;
            })
          }
        />
      ))}
    </div>
  );
}

function MfaPrompt({ job, insurer, s, lang, onAnswered }: { job: Job; insurer: string; s: AutomationStrings; lang: PageProps['lang']; onAnswered: () => void }) {
  const titleId = useId();
  const descriptionId = useId();
  const codeId = useId();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = shortId(job.job_id);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (code.trim() === '') return setError(s.code);
    setBusy(true);
    setError(null);
    const result = await call(answerConsoleMfa, { params: { job_id: job.job_id }, body: { code: code.trim() } });
    setBusy(false);
    if (result.ok) return onAnswered();
    setError(result.error.message);
  }

  return (
    <section className="card automation-mfa" role="dialog" aria-modal="false" aria-labelledby={titleId} aria-describedby={descriptionId}>
      <h2 id={titleId}>{`${s.mfaTitle} — ${insurer}`}</h2>
      <div id={descriptionId}>
        <p>{s.mfaIntro(insurer)}</p>
        <dl className="automation-facts">
          <dt>{s.mfaJob}</dt>
          <dd>
            <a href={`/console/jobs?job=${encodeURIComponent(job.job_id)}`} title={job.job_id}>{`${job.produit} · ${id}`}</a>
          </dd>
          <dt>{s.mfaPortalSaid}</dt>
          <dd className="automation-challenge">{job.mfa?.challenge}</dd>
        </dl>
        {job.mfa && <p className="muted small">{s.mfaExpires(formatTime(lang, job.mfa.expires_at))}</p>}
      </div>
      <form onSubmit={(e) => void submit(e)} className="automation-mfa-form">
        <div className="field">
          <label htmlFor={codeId}>{s.code}</label>
          <input id={codeId} type="text" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} aria-invalid={error ? true : undefined} />
        </div>
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? s.sendingCode : s.sendCode}
        </button>
      </form>
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
