import type { Conseil } from '../../../../shared/comparaisons.js';
import { getConsoleConseilPdf } from '../../../../shared/console-comparaisons.js';
import { pathTo } from '../../../../shared/endpoint.js';
import type { Lang } from '../../i18n.js';
import { formatDateTime } from '../automation/strings.js';
import { COMPARE_STRINGS } from './strings.js';

/** The advice documents made, each with its PDF to download and send. */
export function AdviceList({ advices, nameOf, lang }: { advices: readonly Conseil[]; nameOf: (code: string) => string; lang: Lang }) {
  const s = COMPARE_STRINGS[lang];
  return (
    <div role="status" aria-live="polite">
      {advices.length > 0 && (
        <section className="card compare-advices" aria-labelledby="compare-advices">
          <h2 id="compare-advices">{s.advices}</h2>
          <p className="automation-ok">{s.adviceReady}</p>
          <ul>
            {advices.map((a) => (
              <li key={a.conseil_id}>
                {s.adviceOf(nameOf(a.compagnie), a.formule, formatDateTime(lang, a.created_at))}{' '}
                <a className="button" href={pathTo(getConsoleConseilPdf, { conseil_id: a.conseil_id })} download>
                  {s.downloadAdvice}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
