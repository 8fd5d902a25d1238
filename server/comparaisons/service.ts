import { LINE_GUARANTEES, productJsonSchema, RISK_EXAMPLES, RISK_LINES, type RiskLine } from '@courtier/adapter-kit';
import { RISK_LINE_CODES, type RiskSchemaDocument } from '../../shared/comparaisons.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';

const LINE_LABELS: Record<RiskLine, { fr: string; en: string }> = {
  auto: { fr: 'Assurance automobile', en: 'Car insurance' },
  mrh: { fr: 'Multirisque habitation', en: 'Home insurance' },
};

/** The line named in a path, or unknown_line. */
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
