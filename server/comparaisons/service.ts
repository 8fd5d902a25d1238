import { LINE_GUARANTEES, productJsonSchema, RISK_EXAMPLES, RISK_LINES, type ExtraQuestion, type RiskLine } from '@courtier/adapter-kit';
import type { ApiKeyEnvironment as Environment } from '../../shared/api-keys.js';
import {
  RISK_LINE_CODES,
  type Comparison,
  type ComparisonDryRun,
  type ComparisonRequest,
  type RiskSchemaDocument,
} from '../../shared/comparaisons.js';
import type { Page } from '../../shared/pagination.js';
import { costOf } from '../automation/catalogue.js';
import { getJob } from '../automation/jobs.js';
import { enqueueTarification } from '../automation/service.js';
import { credentialsConfigured } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { recordEvent } from '../events/service.js';
import type { Insurer } from '../insurers/registry.js';
import { mapRisk } from '../insurers/risk-mapping.js';
import { atomically } from '../platform/db/atomically.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import { clientListPage, type ClientListQuery } from '../platform/http/cursor.js';
import { validationError } from '../platform/http/validation.js';
import { pollUrl, toComparison } from './results.js';
import * as store from './store.js';
import { comparisonRecords } from './sync.js';

export const LINE_LABELS: Record<RiskLine, { fr: string; en: string }> = {
  auto: { fr: 'Assurance automobile', en: 'Car insurance' },
  mrh: { fr: 'Multirisque habitation', en: 'Home insurance' },
};

function riskLine(ligne: string): RiskLine {
  if (!(RISK_LINE_CODES as readonly string[]).includes(ligne))
    throw new ApiError('unknown_line', `No line of business "${ligne}": the lines are ${RISK_LINE_CODES.join(' and ')}.`);
  return ligne as RiskLine;
}

/** The common risk model of a line, its guarantees, and the insurers that price it from that risk. */
export function riskSchemaDocument(deps: Pick<Deps, 'insurers'>, ligne: string): RiskSchemaDocument {
  const line = riskLine(ligne);
  return {
    ligne: line,
    label: LINE_LABELS[line],
    json_schema: productJsonSchema(RISK_LINES[line]),
    example: RISK_EXAMPLES[line],
    garanties: Object.entries(LINE_GUARANTEES[line]).map(([code, label]) => ({ code, label: { ...label } })),
    compagnies: deps.insurers.list().flatMap((insurer) => {
      const produit = insurer.risks?.[line]?.produit;
      return produit === undefined ? [] : [{ compagnie: insurer.code, name: insurer.name, produit }];
    }),
  };
}

type LeftOut = Comparison['ecartees'][number];

/** What a comparison would do: the insurers it runs, those it leaves out, those whose questions are open. */
interface Plan {
  run: { insurer: Insurer; produit: string; dicData: Record<string, unknown> }[];
  ecartees: LeftOut[];
  missing: { compagnie: string; produit: string; questions: readonly ExtraQuestion[] }[];
}

/**
 * The insurers asked: those named (each must exist, be one the key can run, and price the line),
 * or every insurer that prices the line and that the key can run.
 */
function candidates(deps: Deps, line: RiskLine, environment: Environment, named: readonly string[] | undefined): Insurer[] {
  const runnable = (insurer: Insurer) => environment !== 'test' || insurer.testKeys !== undefined;
  if (!named) return deps.insurers.list().filter((insurer) => insurer.risks?.[line] !== undefined && runnable(insurer));
  return [...new Set(named)].map((code) => {
    const insurer = deps.insurers.get(code);
    if (!insurer || !runnable(insurer))
      throw new ApiError(
        'unknown_insurer',
        insurer ? `Test keys compare the demo insurers; ${code} is not one.` : `No insurer ${code} on this install.`,
        { compagnie: code },
      );
    if (!insurer.risks?.[line])
      throw new ApiError('line_not_priced', `${insurer.name} does not price the line ${line} from the common risk.`, { compagnie: code });
    return insurer;
  });
}

function plan(deps: Deps, cabinetId: string, request: ComparisonRequest, environment: Environment): Plan {
  const named = request.compagnies !== undefined;
  const result: Plan = { run: [], ecartees: [], missing: [] };
  for (const insurer of candidates(deps, request.ligne, environment, request.compagnies)) {
    const code = insurer.code;
    const hasLogin = (environment === 'test' && insurer.testKeys !== undefined) || credentialsConfigured(deps, cabinetId, code);
    if (!hasLogin) {
      const message = `No portal credentials for ${insurer.name} in this cabinet.`;
      if (named) throw new ApiError('insurer_credentials_missing', `${message} Set them in the console (Insurers).`, { compagnie: code });
      result.ecartees.push({ compagnie: code, raison: 'insurer_credentials_missing', message });
      continue;
    }
    const mapped = mapRisk(insurer, request.ligne, request.risque, request.reponses?.[code] ?? {});
    if (mapped.ok) {
      result.run.push({ insurer, produit: mapped.produit, dicData: mapped.dicData });
    } else if (mapped.reason === 'answers_missing') {
      result.missing.push({ compagnie: code, produit: insurer.risks![request.ligne]!.produit, questions: mapped.questions });
    } else if (mapped.reason === 'answers_invalid') {
      throw validationError(
        mapped.questions.map((q) => ({
          path: `body.reponses.${code}.${q.code}`,
          message: `${q.type === 'choice' ? 'one of the choices' : `a ${q.type}`} is expected`,
        })),
      );
    } else if (named || mapped.reason === 'line_not_priced') {
      throw new ApiError(mapped.reason === 'line_not_priced' ? 'line_not_priced' : 'risk_not_accepted', mapped.message, {
        compagnie: code,
      });
    } else {
      result.ecartees.push({ compagnie: code, raison: mapped.reason, message: mapped.message });
    }
  }
  return result;
}

const costFor = (deps: Deps, insurer: Insurer, produit: string) =>
  costOf(
    deps,
    insurer.products.find((p) => p.code === produit)!,
  );

const questionOut = (q: ExtraQuestion) => ({
  code: q.code,
  label: { ...q.label },
  type: q.type,
  choices: q.choices?.map((c) => ({ value: c.value, label: { ...c.label } })) ?? null,
});

/** What a comparison would run, cost and still need, enqueuing nothing. */
export function dryRunComparison(deps: Deps, cabinetId: string, request: ComparisonRequest, environment: Environment): ComparisonDryRun {
  const planned = plan(deps, cabinetId, request, environment);
  const compagnies: ComparisonDryRun['compagnies'] = [
    ...planned.run.map(({ insurer, produit }) => ({
      compagnie: insurer.code,
      produit,
      would_run: true,
      cost_credits: costFor(deps, insurer, produit),
      missing_answers: [],
      raison: null,
      message: null,
    })),
    ...planned.missing.map(({ compagnie, produit, questions }) => ({
      compagnie,
      produit,
      would_run: false,
      cost_credits: costFor(deps, deps.insurers.get(compagnie)!, produit),
      missing_answers: questions.map(questionOut),
      raison: 'answers_missing',
      message: `Questions of its own are open: ${questions.map((q) => q.code).join(', ')}.`,
    })),
    ...planned.ecartees.map(({ compagnie, raison, message }) => ({
      compagnie,
      produit: null,
      would_run: false,
      cost_credits: 0,
      missing_answers: [],
      raison,
      message,
    })),
  ];
  return {
    comparaison_id: null,
    status: 'dry_run_ok',
    compagnies,
    would_cost_credits: planned.run.reduce((sum, { insurer, produit }) => sum + costFor(deps, insurer, produit), 0),
    credits_consumed: 0,
  };
}

/**
 * Enqueues one tarification per insurer, all or none: the insurers' open questions and an empty
 * choice are refused first, then every job goes through enqueueTarification's guards inside one
 * transaction, so that a refusal (wallet, quota, breaker…) leaves nothing enqueued or debited.
 */
export function createComparison(deps: Deps, cabinetId: string, request: ComparisonRequest, environment: Environment) {
  const planned = plan(deps, cabinetId, request, environment);
  if (planned.missing.length > 0) {
    throw new ApiError(
      'answers_missing',
      `Answer the questions of ${planned.missing.map((m) => m.compagnie).join(', ')} in reponses, or leave them out with compagnies.`,
      { questions: Object.fromEntries(planned.missing.map((m) => [m.compagnie, m.questions.map(questionOut)])) },
    );
  }
  if (planned.run.length === 0)
    throw new ApiError('no_insurer_available', 'No insurer can price this risk for this key.', { ecartees: planned.ecartees });
  return atomically(deps.db, () => {
    const now = deps.clock.now();
    const id = timeOrderedUuid(now, deps.randomBytes);
    const jobs = planned.run.map(({ insurer, produit, dicData }) => {
      const enqueued = enqueueTarification(
        deps,
        cabinetId,
        { compagnie: insurer.code, produit, dicData, ...(request.client_id ? { client_id: request.client_id } : {}) },
        environment,
        { enqueuedBy: 'integration' },
      );
      return { compagnie: insurer.code, produit, job_id: enqueued.job_id, devis_id: getJob(deps, cabinetId, enqueued.job_id).devis_id };
    });
    comparisonRecords.insert(deps, {
      id,
      cabinetId,
      ligne: request.ligne,
      clientId: request.client_id ?? null,
      risque: JSON.stringify(request.risque),
      jobs: JSON.stringify(jobs),
      ecartees: JSON.stringify(planned.ecartees),
      environment,
      createdAt: now,
      completedAt: null,
      madeHere: true,
    });
    store.insertComparisonJobs(
      deps.db.orm,
      id,
      cabinetId,
      jobs.map((job) => job.job_id),
    );
    const consumed = jobs.reduce((sum, job) => sum + getJob(deps, cabinetId, job.job_id).credits_consumed, 0);
    return {
      comparaison_id: id,
      status: 'pending' as const,
      jobs: jobs.map(({ devis_id: _devis, ...job }) => job),
      ecartees: planned.ecartees,
      poll_url: pollUrl(id),
      credits_consumed: consumed,
    };
  });
}

export function getComparison(deps: Deps, cabinetId: string, id: string): Comparison {
  const row = store.findComparison(deps.db.orm, cabinetId, id);
  if (!row) throw new ApiError('not_found', `No comparison with id ${id} in this cabinet.`);
  return toComparison(deps, row);
}

export function listComparisons(deps: Deps, cabinetId: string, query: ClientListQuery): Page<Comparison> {
  return clientListPage(
    deps.keys.cursor,
    { cabinetId, resource: 'comparaisons' },
    query,
    (filters, limit) => store.listComparisons(deps.db.orm, cabinetId, filters, limit),
    (row) => toComparison(deps, row),
  );
}

/**
 * Records comparaison.completed for each of these comparisons whose every job has ended, once (the
 * row's completed_at says it was): called when jobs change, and at start for any a stop left open.
 */
export function settleComparisons(deps: Deps, rows: readonly store.ComparisonRow[]): void {
  for (const row of rows) {
    const comparison = toComparison(deps, row);
    if (comparison.status === 'pending' || comparison.status === 'running') continue;
    const status = comparison.status;
    atomically(deps.db, () => {
      // Once: the row read again inside the transaction says whether another call got here first.
      if (store.findComparison(deps.db.orm, row.cabinetId, row.id)?.completedAt !== null) return;
      comparisonRecords.update(deps, row.cabinetId, row.id, { completedAt: deps.clock.now() });
      recordEvent(deps, row.cabinetId, 'comparaison.completed', {
        comparaison_id: row.id,
        ligne: row.ligne,
        client_id: row.clientId,
        status,
        resultats: comparison.resultats.map((r) => ({
          compagnie: r.compagnie,
          job_id: r.job_id,
          status: r.status,
          tarif_eur: r.tarif_eur,
          devis_id: r.devis_id,
        })),
      });
    });
  }
}

/** The open comparisons these changed jobs belong to. */
export function comparisonsOfJobs(deps: Deps, jobIds: readonly string[]): store.ComparisonRow[] {
  return store.openComparisonsOfJobs(deps.db.orm, jobIds);
}

export function openComparisons(deps: Deps): store.ComparisonRow[] {
  return store.openComparisons(deps.db.orm);
}

/**
 * A client's erasure: the risks of the comparisons made for them, or that priced their quotes, are
 * emptied. Their advice documents stay, as a signed quote's PDF does: the record of the advice
 * given, which a broker must keep.
 */
export function eraseComparisonRisks(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  clientId: string,
  jobIds: readonly string[],
): void {
  for (const id of store.comparisonsWithRiskOf(deps.db.orm, cabinetId, clientId, jobIds))
    comparisonRecords.update(deps, cabinetId, id, { risque: store.EMPTIED_RISK });
}
