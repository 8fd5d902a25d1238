import { z } from 'zod';
import { createDevisBody, devisStatusSchema, getDevis, type Devis } from '../../shared/devis.js';
import * as devis from '../devis/service.js';
import { createPdfLink } from '../devis/pdf-link.js';
import { ApiError } from '../errors.js';
import { CREATE, defineTool, listed, READ, sharesPersonalData, type ToolContext } from './tool-definition.js';

/** get_devis_pdf_link while the cabinet does not share personal data: where a person gets the PDF instead. */
function pdfWithheld({ baseUrl }: ToolContext, quote: Devis): ApiError {
  // The console's jobs page opens the job named in ?job=, with its PDF.
  const consoleUrl = quote.job_id === null ? `${baseUrl()}/console/` : `${baseUrl()}/console/jobs?job=${encodeURIComponent(quote.job_id)}`;
  return new ApiError(
    'llm_data_sharing_off',
    `The PDF of quote ${quote.devis_id} holds the client’s personal data, which this cabinet does not share with AI assistants, so no link is given. ` +
      `A person can download it in the Courtier console: ${consoleUrl}. An administrator can enable LLM data sharing in the console’s Settings.`,
    { devis_id: quote.devis_id, console_url: consoleUrl },
  );
}

const devisId = getDevis.params.shape.devis_id.describe(
  'The quote id (devis_id from create_devis, price_quote via get_job, or get_devis).',
);

/** The quotes' tools: a draft, and a quote as it stands. */
export const DEVIS_TOOLS = [
  defineTool({
    name: 'create_devis',
    title: 'Create a draft quote',
    description:
      'Creates a draft quote (devis) for a client, without pricing it, and returns it with its devis_id and status draft. ' +
      'client_id comes from list_clients or create_client; compagnie and produit are codes from list_products; dicData follows get_product_schema ' +
      '(it may be incomplete in a draft). To price it later, call price_quote with this devis_id.',
    input: createDevisBody,
    annotations: { ...CREATE, title: 'Create a draft quote' },
    scope: 'devis:draft',
    idempotent: true,
    returns: 'devis',
    run: ({ deps, access }, input) => devis.createDevis(deps, access.cabinetId, input),
  }),
  defineTool({
    name: 'get_devis',
    title: 'Get a quote',
    description:
      `Returns one quote (devis) by its devis_id: status (${listed(devisStatusSchema.options)}), the premium tarif_eur once priced, ` +
      'the insurer’s pending conditions (suspens), whether a PDF exists (pdf_available) and the pricing job_id. ' +
      'For the PDF itself, use get_devis_pdf_link.',
    input: z.strictObject({ devis_id: devisId }),
    annotations: { ...READ, title: 'Get a quote' },
    scope: 'devis:read',
    returns: 'devis',
    run: ({ deps, access }, { devis_id }) => devis.getDevis(deps, access.cabinetId, devis_id),
  }),
];

/** A link to a priced quote's PDF, withheld while the cabinet does not share personal data. */
export const DEVIS_PDF_LINK_TOOL = defineTool({
  name: 'get_devis_pdf_link',
  title: 'Get a download link for a quote’s PDF',
  description:
    'Returns {devis_id, url, expires_at}: an absolute download link to the PDF of a priced quote (devis_id from get_devis or get_job). ' +
    'The link needs no sign-in and expires after 5 minutes; give it to the user rather than fetching it. ' +
    'A quote that is not priced yet gives the error pdf_not_available. While the cabinet does not share personal data with assistants, ' +
    'the PDF (which holds the client’s) is not given: the error llm_data_sharing_off says where a person downloads it in the console.',
  input: z.strictObject({ devis_id: devisId }),
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
    title: 'Get a download link for a quote’s PDF',
  },
  scope: 'devis:read',
  returns: 'devis_pdf_link',
  run: (ctx, { devis_id }) => {
    const { deps, access, baseUrl } = ctx;
    // First what any caller is told (no such quote, no PDF yet); a signed link made here for nothing costs nothing.
    const url = baseUrl() + createPdfLink(deps, access.cabinetId, devis_id);
    // Masking cannot reach into a PDF: while sharing is off, the bearer link itself is withheld.
    if (!sharesPersonalData(ctx)) throw pdfWithheld(ctx, devis.getDevis(deps, access.cabinetId, devis_id));
    const expires = Number(new URL(url).searchParams.get('expires'));
    return { devis_id, url, expires_at: new Date(expires * 1000).toISOString() };
  },
});
