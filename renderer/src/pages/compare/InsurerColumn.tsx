import { getConsoleDevisPdf, waitsForCode, type ConsoleJob } from '../../../../shared/console-automation.js';
import type { Offre } from '../../../../shared/devis-documents.js';
import { pathTo } from '../../../../shared/endpoint.js';
import type { Lang } from '../../i18n.js';
import { JOB_STRINGS } from '../automation/jobStrings.js';
import { jobPath } from '../automation/jobView.js';
import { formatEuros } from '../automation/strings.js';
import { missingGuarantees, offerKey, type Result } from './offers.js';
import { COMPARE_STRINGS } from './strings.js';

interface ColumnProps {
  result: Result;
  /** Its job as the live feed last told it (null until it changes). */
  job: ConsoleJob | null;
  name: string;
  wanted: readonly string[];
  marked: { cheapest: string | null; broadest: string | null };
  guaranteeLabel: (code: string) => string;
  canRecommend: boolean;
  onRecommend: (offre: Offre) => void;
  lang: Lang;
}

/** One insurer's column: its robot's progress (and a person's step), then its offers, or why it has none. */
export function InsurerColumn({ result, job, name, wanted, marked, guaranteeLabel, canRecommend, onRecommend, lang }: ColumnProps) {
  const s = COMPARE_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const headingId = `compare-${result.compagnie}`;
  const status = job && !['completed', 'partial', 'failed', 'cancelled'].includes(result.status) ? job.status : result.status;
  const ended = ['completed', 'partial', 'failed', 'cancelled'].includes(status);
  // Offers that lack a wanted guarantee come after the others, dimmed.
  const offers = [...result.offres].sort((a, b) => missingGuarantees(a, wanted).length - missingGuarantees(b, wanted).length);
  return (
    <li className="card compare-column" aria-labelledby={headingId}>
      <h2 id={headingId}>{name}</h2>
      {!ended && (
        <div role="status" aria-live="polite">
          {job && waitsForCode(job) ? (
            <p className="compare-human">
              <strong>{s.humanStep}</strong> {s.answerPrompt}
            </p>
          ) : (
            <p className="muted">{job ? s.robotStep(j.step(job.progress.step), job.progress.percent) : s.waiting}</p>
          )}
          {job && <progress max={100} value={job.progress.percent} aria-label={name} />}
        </div>
      )}
      {ended && result.offres.length === 0 && (
        <div className="compare-failed">
          <p>
            <strong>{s.noPrice}</strong>
          </p>
          {result.error && <p>{j.jobError(result.error.code, result.error.message)}</p>}
          <p className="muted small">
            <a href={jobPath(result.job_id)}>{s.openJob}</a>
          </p>
        </div>
      )}
      {offers.map((offre) => {
        const key = offerKey(result.compagnie, offre.formule);
        const lacks = missingGuarantees(offre, wanted);
        return (
          <article
            key={offre.formule}
            className={lacks.length > 0 ? 'compare-offer compare-offer-apart' : 'compare-offer'}
            aria-label={`${name} · ${offre.libelle}`}
          >
            <h3>{offre.libelle}</h3>
            <p className="compare-marks">
              {marked.cheapest === key && <span className="badge compare-mark-cheapest">{s.cheapest}</span>}
              {marked.broadest === key && <span className="badge compare-mark-broadest">{s.broadest}</span>}
            </p>
            <p className="compare-price">
              <strong>{s.yearly(formatEuros(lang, offre.prime_annuelle_eur))}</strong>
              {offre.prime_mensuelle_eur !== null && (
                <span className="muted small"> {s.monthly(formatEuros(lang, offre.prime_mensuelle_eur))}</span>
              )}
            </p>
            <p className="small">{offre.franchise_eur !== null ? s.deductible(formatEuros(lang, offre.franchise_eur)) : s.noDeductible}</p>
            <ul className="compare-guarantees">
              {offre.garanties.map((g) => (
                <li key={g.code} className={g.incluse ? 'compare-in' : 'compare-out'}>
                  <span aria-hidden="true">{g.incluse ? '✓ ' : '— '}</span>
                  <span className="visually-hidden">{g.incluse ? s.included : s.notIncluded}: </span>
                  {guaranteeLabel(g.code)}
                  {g.plafond_eur !== null && <span className="muted small"> · {s.upTo(formatEuros(lang, g.plafond_eur))}</span>}
                </li>
              ))}
            </ul>
            {lacks.length > 0 && <p className="small compare-lacks">{s.lacks(lacks.map(guaranteeLabel).join(', '))}</p>}
            <p className="compare-offer-actions">
              {result.pdf_url !== null && (
                <a className="button" href={pathTo(getConsoleDevisPdf, { devis_id: result.devis_id })} download>
                  {s.quotePdf}
                </a>
              )}
              {canRecommend && (
                <button type="button" className="button button-primary" onClick={() => onRecommend(offre)}>
                  {s.recommend}
                </button>
              )}
            </p>
          </article>
        );
      })}
    </li>
  );
}
