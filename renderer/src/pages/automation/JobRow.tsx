import { shortJobReference } from '../../../../shared/automation.js';
import { getConsoleDevisPdf, type ConsoleJob } from '../../../../shared/console-automation.js';
import { pathTo } from '../../../../shared/endpoint.js';
import type { PageProps } from '../../slices/types.js';
import type { JobStrings } from './jobStrings.js';
import { CANCELLABLE, creditsText, insuredOf, jobPath } from './jobView.js';
import { formatDateTime, formatEuros, type AutomationStrings } from './strings.js';

/** One job in the list: who it prices, when, its status and progress, its cost and result, and Cancel while it can be. */
export function JobRow({
  job,
  s,
  j,
  lang,
  highlighted,
  rowRef,
  onCancel,
}: {
  job: ConsoleJob;
  s: AutomationStrings;
  j: JobStrings;
  lang: PageProps['lang'];
  highlighted: boolean;
  rowRef?: React.RefObject<HTMLTableRowElement | null>;
  onCancel: () => void;
}) {
  const who = insuredOf(job, j);
  const failed = job.status === 'failed';
  return (
    <tr
      ref={rowRef}
      className={highlighted ? 'automation-highlight' : undefined}
      aria-current={highlighted ? 'true' : undefined}
      data-status={job.status}
    >
      <th scope="row" data-label={j.insured}>
        <a href={jobPath(job.job_id)} className="automation-job-link" aria-label={j.openDetail(who)}>
          {who}
        </a>
        <br />
        <span className="muted small">{`${job.product_label} · ${job.insurer_name}`}</span>
        <br />
        <span className="muted small" title={job.job_id}>{`${j.reference} ${shortJobReference(job.job_id)}`}</span>
      </th>
      <td data-label={s.created}>{formatDateTime(lang, job.created_at)}</td>
      <td data-label={s.status}>
        <span className={`automation-status-${job.status}`}>{s.statuses[job.status]}</span>
        {job.elsewhere && (
          <>
            <br />
            <span className="muted small" title={j.elsewhereHint}>
              {j.elsewhere}
            </span>
          </>
        )}
      </td>
      <td className="automation-progress-cell" data-label={s.progress}>
        <progress
          max={100}
          value={job.progress.percent}
          aria-valuenow={job.progress.percent}
          aria-label={s.progressOf(shortJobReference(job.job_id))}
        />
        <span className="small">{`${job.progress.percent} % · ${j.step(job.progress.step)}`}</span>
      </td>
      <td data-label={s.creditsCol}>{creditsText(job, j)}</td>
      <td data-label={s.result}>
        {job.result && (
          <p className="automation-result">
            <strong>{s.premium(formatEuros(lang, job.result.tarif_eur))}</strong>
            {job.result.suspens && <span className="muted small">{` · ${s.stillNeeded(job.result.suspens)}`}</span>}
            {job.result.pdf_url && (
              <>
                <br />
                <a href={pathTo(getConsoleDevisPdf, { devis_id: job.devis_id })} download>
                  {s.downloadPdf}
                </a>
              </>
            )}
          </p>
        )}
        {job.error && <p className={failed ? 'automation-error' : 'muted small'}>{j.jobError(job.error.code, job.error.message)}</p>}
      </td>
      <td className="automation-row-actions">
        {CANCELLABLE.includes(job.status) && !job.elsewhere && (
          <button type="button" className="button" aria-label={s.cancelJob(who)} onClick={onCancel}>
            {s.cancel}
          </button>
        )}
      </td>
    </tr>
  );
}
