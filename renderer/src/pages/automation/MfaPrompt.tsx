import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { MfaAnswer } from '../../../../shared/automation.js';
import {
  acknowledgeConsoleMfa,
  answerConsoleMfa,
  getConsoleMfaImage,
  waitsForCode,
  type ConsoleJob,
} from '../../../../shared/console-automation.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { call } from '../../api.js';
import type { PageProps } from '../../slices/types.js';
import { subscribeToJobs } from './jobFeed.js';
import { JOB_STRINGS, type JobStrings } from './jobStrings.js';
import { insuredOf, jobPath } from './jobView.js';
import { AUTOMATION_STRINGS, formatTime, type AutomationStrings } from './strings.js';

/**
 * The cabinet's jobs that wait for a person's code, from the live feed: answered here or in another
 * console, or timed out, a job leaves the waiting state and the feed takes it out everywhere.
 */
function useWaitingJobs(): { waiting: ReadonlyMap<string, ConsoleJob>; forget: (jobId: string) => void } {
  const [waiting, setWaiting] = useState<Map<string, ConsoleJob>>(new Map());
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
  const forget = (jobId: string) =>
    setWaiting((current) => {
      const next = new Map(current);
      next.delete(jobId);
      return next;
    });
  return { waiting, forget };
}

/** How many prompts wait: the menu's Jobs link and the tab's title carry it. */
export function useWaitingCount(): number {
  return useWaitingJobs().waiting.size;
}

/** Where the browser allows it, a desktop notification for a prompt that opened while the tab was not looked at. */
function notify(job: ConsoleJob, j: JobStrings): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || document.hasFocus()) return;
  try {
    const notification = new Notification(j.notificationTitle(insuredOf(job, j)), {
      body: j.notificationBody(job.insurer_name),
      tag: job.job_id,
    });
    notification.onclick = () => window.focus();
  } catch {
    // Some browsers only notify from a service worker: the title's count and the prompt remain.
  }
}

const TAKEN_SHOWN_MS = 8000;

/**
 * Shown at the top of every signed-in page, in the flow (it pushes the page down, never covers its
 * buttons): one prompt per job that waits for an MFA code. A new prompt takes the keyboard focus.
 */
export function MfaPrompts({ lang }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const { waiting, forget } = useWaitingJobs();
  const seen = useRef(new Set<string>());
  const [focusJob, setFocusJob] = useState<string | null>(null);
  const [permission, setPermission] = useState(typeof Notification === 'undefined' ? 'denied' : Notification.permission);
  /** Said for a few seconds once a code is taken, where the prompt was: the robot goes on. */
  const [taken, setTaken] = useState<string | null>(null);
  useEffect(() => {
    if (taken === null) return;
    const timer = window.setTimeout(() => setTaken(null), TAKEN_SHOWN_MS);
    return () => window.clearTimeout(timer);
  }, [taken]);

  useEffect(() => {
    for (const job of waiting.values()) {
      if (seen.current.has(job.job_id)) continue;
      seen.current.add(job.job_id);
      setFocusJob(job.job_id);
      notify(job, j);
      // Tell the server a person sees the prompt (mfa_required → awaiting_mfa), once per job here.
      if (job.status === 'mfa_required') void call(acknowledgeConsoleMfa, { params: { job_id: job.job_id } });
    }
  }, [waiting, j]);

  if (waiting.size === 0 && taken === null) return null;
  const prompts = [...waiting.values()].sort((a, b) => (a.mfa?.requested_at ?? '').localeCompare(b.mfa?.requested_at ?? ''));
  return (
    <div className="automation-mfa-stack">
      {prompts.map((job) => (
        <MfaPrompt
          key={job.job_id}
          job={job}
          s={s}
          j={j}
          lang={lang}
          takeFocus={job.job_id === focusJob}
          onAnswered={() => {
            forget(job.job_id);
            setTaken(s.codeTaken(job.insurer_name));
          }}
        />
      ))}
      {taken !== null && (
        <p className="automation-ok" role="status">
          {taken}
        </p>
      )}
      {permission === 'default' && (
        <button
          type="button"
          className="button automation-notify"
          onClick={() => void Notification.requestPermission().then(setPermission)}
        >
          {j.enableNotifications}
        </button>
      )}
    </div>
  );
}

function MfaPrompt(props: {
  job: ConsoleJob;
  s: AutomationStrings;
  j: JobStrings;
  lang: PageProps['lang'];
  takeFocus: boolean;
  onAnswered: () => void;
}) {
  const { job, s, j, lang, takeFocus, onAnswered } = props;
  const titleId = useId();
  const descriptionId = useId();
  const codeId = useId();
  const errorId = useId();
  const input = useRef<HTMLInputElement | null>(null);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const who = insuredOf(job, j);

  useEffect(() => {
    if (takeFocus) input.current?.focus();
  }, [takeFocus]);

  const kind = job.mfa?.kind ?? 'otp';
  const choices = job.mfa?.choices ?? null;
  const codeLabel = kind === 'captcha' ? s.captchaText : job.mfa?.channel ? s.codeFrom[job.mfa.channel] : s.code;

  async function submit(event: FormEvent) {
    event.preventDefault();
    const text = code.trim();
    if (kind !== 'app_approval' && text === '') return setError(kind === 'question' ? s.answer : codeLabel);
    const body: MfaAnswer = kind === 'app_approval' ? { approved: true } : kind === 'question' ? { answer: text } : { code: text };
    setBusy(true);
    setError(null);
    const result = await call(answerConsoleMfa, { params: { job_id: job.job_id }, body });
    setBusy(false);
    if (result.ok) return onAnswered();
    setError(result.error.message);
  }

  const invalid = { 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? errorId : undefined } as const;

  return (
    <section className="card automation-mfa" role="dialog" aria-modal="false" aria-labelledby={titleId} aria-describedby={descriptionId}>
      <h2 id={titleId}>{`${kind === 'otp' ? s.mfaTitle : s.stepTitle[kind]} — ${job.insurer_name}`}</h2>
      <div id={descriptionId}>
        <p>{kind === 'otp' ? s.mfaIntro(job.insurer_name) : s.stepIntro[kind](job.insurer_name)}</p>
        <dl className="automation-facts">
          <dt>{s.mfaJob}</dt>
          <dd>
            <a href={jobPath(job.job_id)}>{j.mfaFor(who, job.product_label)}</a>
          </dd>
          <dt>{s.mfaPortalSaid}</dt>
          <dd className="automation-challenge">{job.mfa?.challenge}</dd>
        </dl>
        {job.mfa && <p className="muted small">{s.mfaExpires(formatTime(lang, job.mfa.expires_at))}</p>}
      </div>
      {kind === 'captcha' && (
        <img className="automation-captcha" src={pathTo(getConsoleMfaImage, { job_id: job.job_id })} alt={s.captchaImage} />
      )}
      <form onSubmit={(e) => void submit(e)} className="automation-mfa-form">
        {(kind === 'otp' || kind === 'captcha' || (kind === 'question' && !choices)) && (
          <div className="field">
            <label htmlFor={codeId}>{kind === 'question' ? s.answer : codeLabel}</label>
            <input
              id={codeId}
              ref={input}
              type="text"
              {...(kind === 'otp' ? { inputMode: 'numeric', autoComplete: 'one-time-code' } : { autoComplete: 'off' })}
              value={code}
              onChange={(e) => setCode(e.target.value)}
              {...invalid}
            />
          </div>
        )}
        {kind === 'question' && choices && (
          <fieldset className="field" {...invalid}>
            <legend>{s.answer}</legend>
            {choices.map((choice, index) => (
              <label key={choice.value} className="automation-choice">
                <input
                  type="radio"
                  name={codeId}
                  value={choice.value}
                  checked={code === choice.value}
                  onChange={() => setCode(choice.value)}
                  {...(index === 0 ? { ref: input } : {})}
                />{' '}
                {choice.label}
              </label>
            ))}
          </fieldset>
        )}
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? s.sendingCode : kind === 'app_approval' ? s.approvedIt : kind === 'question' ? s.sendAnswer : s.sendCode}
        </button>
      </form>
      {error && (
        <p id={errorId} className="alert" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
