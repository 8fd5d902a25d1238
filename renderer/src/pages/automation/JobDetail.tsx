import { useCallback, useEffect, useState } from 'react';
import { shortJobReference } from '../../../../shared/automation.js';
import type { ProductSchemaDocument } from '../../../../shared/products.js';
import {
  cancelConsoleJob,
  getConsoleDevisPdf,
  getConsoleJob,
  getConsoleJobArtifact,
  getConsoleProductSchema,
  retryConsoleJob,
  type ConsoleJobDetail,
} from '../../../../shared/console-automation.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { call } from '../../api.js';
import { formatDay, formatNumber } from '../../format.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { subscribeToJobs } from './jobFeed.js';
import { CANCELLABLE, creditsText, formatClock, insuredOf, jobPath } from './jobView.js';
import { JOB_STRINGS } from './jobStrings.js';
import { AUTOMATION_STRINGS, formatDateTime, formatEuros } from './strings.js';

type Loaded = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; job: ConsoleJobDetail };

/** A value of dicData as a broker reads it: the product's label for a code, yes/no, a date in the user's language. */
function shownValue(value: unknown, lang: PageProps['lang'], enumLabels: Record<string, string> | undefined): string {
  if (typeof value === 'string') {
    if (enumLabels?.[value] !== undefined) return enumLabels[value];
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return formatDay(lang, value);
    return value;
  }
  if (typeof value === 'boolean') return value ? (lang === 'fr' ? 'Oui' : 'Yes') : lang === 'fr' ? 'Non' : 'No';
  if (typeof value === 'number') return formatNumber(lang, value);
  return JSON.stringify(value);
}

/** /console/jobs/<id>: who and what, where it stands, its inputs, its steps, the error in words, the credits; Retry and Cancel (not for another computer's job). */
export function JobDetail({ lang, t, session, jobId }: PageProps & { jobId: string }) {
  const s = AUTOMATION_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [doc, setDoc] = useState<ProductSchemaDocument | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    const result = await call(getConsoleJob, { params: { job_id: jobId } });
    if (!result.ok) return setLoaded({ kind: 'error', message: result.error.message });
    setLoaded({ kind: 'ready', job: result.data });
  }, [jobId]);

  useEffect(() => {
    void load();
    // Each change of this job reloads it with its new step.
    return subscribeToJobs({
      job(changed) {
        if (changed.job_id === jobId) void load();
      },
    });
  }, [jobId, load]);

  const product = loaded.kind === 'ready' ? `${loaded.job.produit}|${loaded.job.compagnie}` : null;
  useEffect(() => {
    if (product === null) return;
    const [code = '', compagnie = ''] = product.split('|');
    void call(getConsoleProductSchema, { params: { code }, query: { compagnie } }).then((result) => {
      if (result.ok) setDoc(result.data);
    });
  }, [product]);

  const retrying = useConfirmation(
    (job: ConsoleJobDetail) => call(retryConsoleJob, { params: { job_id: job.job_id } }),
    (_job, result) => {
      if (!result.ok) return setError(result.error.message);
      go(jobPath(result.data.job_id));
    },
  );
  const cancelling = useConfirmation(
    (job: ConsoleJobDetail) => call(cancelConsoleJob, { params: { job_id: job.job_id } }),
    async (_job, result) => {
      if (!result.ok) return setError(result.error.message);
      await load();
    },
  );

  if (loaded.kind === 'loading') return <Loading t={t} />;
  if (loaded.kind === 'error') {
    return (
      <section className="automation">
        <p>
          <a className="back-link" href="/console/jobs">{`← ${j.backToJobs}`}</a>
        </p>
        <Alert>{loaded.message}</Alert>
      </section>
    );
  }
  const job = loaded.job;
  const who = insuredOf(job, j);
  const failed = job.status === 'failed';
  const isAdmin = session.user.role === 'admin';

  return (
    <section className="automation automation-job-detail" aria-labelledby="job-title">
      <p>
        <a className="back-link" href="/console/jobs">{`← ${j.backToJobs}`}</a>
      </p>
      <div className="automation-heading">
        <h1 id="job-title">{j.jobTitle(who, job.product_label)}</h1>
        <span className={`badge automation-status-${job.status}`}>{s.statuses[job.status]}</span>
      </div>
      {error && <Alert>{error}</Alert>}
      {job.elsewhere && <p className="muted">{j.elsewhereHint}</p>}
      <dl className="automation-facts">
        <dt>{j.insurer}</dt>
        <dd>{job.insurer_name}</dd>
        {job.adapter && (
          <>
            <dt>{j.robot}</dt>
            <dd>{`${job.adapter.code} ${job.adapter.version}`}</dd>
          </>
        )}
        <dt>{s.created}</dt>
        <dd>{formatDateTime(lang, job.created_at)}</dd>
        <dt>{s.progress}</dt>
        <dd>
          <progress max={100} value={job.progress.percent} aria-label={s.progressOf(shortJobReference(job.job_id))} />{' '}
          {`${job.progress.percent} % · ${j.step(job.progress.step)}`}
        </dd>
        <dt>{s.creditsCol}</dt>
        <dd>
          {j.creditsLine(job.credits, failed)} <span className="automation-sr-only">{creditsText(job, j)}</span>
        </dd>
        {job.result && (
          <>
            <dt>{s.result}</dt>
            <dd>
              <strong>{s.premium(formatEuros(lang, job.result.tarif_eur))}</strong>
              {job.result.suspens && <span className="muted">{` · ${s.stillNeeded(job.result.suspens)}`}</span>}
              {job.result.pdf_url && (
                <>
                  {' · '}
                  <a href={pathTo(getConsoleDevisPdf, { devis_id: job.devis_id })} download>
                    {s.downloadPdf}
                  </a>
                </>
              )}
            </dd>
          </>
        )}
        {job.client_id && (
          <>
            <dt>{j.client}</dt>
            <dd>
              <a href={`/console/clients/${encodeURIComponent(job.client_id)}`}>{j.openClient}</a>
            </dd>
          </>
        )}
        <dt>{j.reference}</dt>
        <dd className="small">
          <code>{job.job_id}</code>
        </dd>
      </dl>

      {job.error && (
        <section className={failed ? 'card automation-error-card' : 'card'} aria-labelledby="job-error">
          <h2 id="job-error">{j.whatHappened}</h2>
          <p>{j.jobError(job.error.code, job.error.message)}</p>
          {isAdmin && job.artifacts && (
            <p className="small">
              {j.artifactsTitle}
              {' : '}
              {job.artifacts.screenshot_url && (
                <a href={pathTo(getConsoleJobArtifact, { job_id: job.job_id, name: 'screenshot.png' })} target="_blank" rel="noreferrer">
                  {s.screenshot}
                </a>
              )}
              {job.artifacts.trace_url && (
                <>
                  {' · '}
                  <a href={pathTo(getConsoleJobArtifact, { job_id: job.job_id, name: 'trace.zip' })} download>
                    {s.trace}
                  </a>
                </>
              )}
              {job.artifacts.portal_changes_url && (
                <>
                  {' · '}
                  <a href={pathTo(getConsoleJobArtifact, { job_id: job.job_id, name: 'portal-changed.json' })} download>
                    {s.portalChanges}
                  </a>
                </>
              )}
            </p>
          )}
        </section>
      )}

      <div className="automation-actions">
        {job.retryable && (
          <button type="button" className="button button-primary" onClick={() => retrying.ask(job)}>
            {j.retry}
          </button>
        )}
        {CANCELLABLE.includes(job.status) && !job.elsewhere && (
          <button type="button" className="button" onClick={() => cancelling.ask(job)}>
            {s.cancel}
          </button>
        )}
      </div>

      <section aria-labelledby="job-inputs">
        <h2 id="job-inputs">{j.inputs}</h2>
        <dl className="automation-facts automation-inputs">
          {Object.entries(job.dicData).map(([field, value]) => (
            <div key={field} className="automation-input">
              <dt>{doc?.labels[field] ?? field}</dt>
              <dd>{shownValue(value, lang, doc?.enum_labels[field])}</dd>
            </div>
          ))}
        </dl>
      </section>

      <section aria-labelledby="job-steps">
        <h2 id="job-steps">{j.timeline}</h2>
        {job.steps.length === 0 ? (
          <p className="muted">{j.timelineElsewhere}</p>
        ) : (
          <ol className="automation-timeline">
            {job.steps.map((step, i) => (
              <li key={i}>
                <time dateTime={step.at}>{formatClock(lang, step.at)}</time>{' '}
                <span className={`automation-status-${step.status}`}>{s.statuses[step.status]}</span>
                {' · '}
                {`${j.step(step.step)} (${step.percent} %)`}
              </li>
            ))}
          </ol>
        )}
      </section>

      <ConfirmStep
        confirmation={retrying}
        title={() => j.retryTitle}
        text={(item) => j.retryBody(insuredOf(item, j), item.product_label, item.credits.cost)}
        confirmLabel={j.retryConfirm}
        cancelLabel={s.cancel}
        tone="primary"
      />
      <ConfirmStep
        confirmation={cancelling}
        title={() => j.cancelTitle}
        text={(item) => j.cancelBody(insuredOf(item, j))}
        confirmLabel={j.cancelConfirm}
        cancelLabel={j.keepRunning}
      />
    </section>
  );
}
