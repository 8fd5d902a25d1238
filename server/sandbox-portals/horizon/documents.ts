import { formatEuros } from '../sandbox/pricing.js';
import { frenchDateTime } from '../../platform/pdf-text.js';
import { minimalPdf, plainAmount, type PdfLine } from '../pdf.js';
import type { Quote } from './state.js';
import { PRODUCT_LABELS } from './wizard.js';

/**
 * The documents of a quote whose formula is chosen: the quote itself, the general conditions and
 * the information document (IPID). The quote's /Keywords carry its reference and its premium
 * (`prime annuelle 640,12 EUR`), greppable in the bytes (../pdf.ts).
 */

const INSURER_NAME = 'Horizon Direct';

export type DocumentId = 'devis' | 'conditions-generales' | 'ipid';

export const DOCUMENTS: readonly { id: DocumentId; kind: 'quote' | 'conditions' | 'information'; label: string }[] = [
  { id: 'devis', kind: 'quote', label: 'Devis' },
  { id: 'conditions-generales', kind: 'conditions', label: 'Conditions générales' },
  { id: 'ipid', kind: 'information', label: 'Document d’information (IPID)' },
];

function quoteLines(quote: Quote): PdfLine[] {
  const offer = quote.offers?.find((o) => o.formule === quote.chosen);
  if (!offer) return [];
  return [
    { text: `Souscripteur : ${String(quote.answers.prenom)} ${String(quote.answers.nom)}` },
    { text: `Formule : ${offer.libelle}`, bold: true },
    { text: `Prime annuelle TTC : ${formatEuros(offer.prime_annuelle_eur)}`, size: 14, bold: true },
    { text: `Ou ${formatEuros(offer.prime_mensuelle_eur)} par mois` },
    { text: `Franchise : ${formatEuros(offer.franchise_eur)}` },
    { text: '' },
    ...offer.garanties.map((g) => ({
      text: `${g.libelle} : ${g.incluse ? 'incluse' : 'non incluse'}${g.plafond_eur ? ` (jusqu’à ${formatEuros(g.plafond_eur)})` : ''}`,
    })),
  ];
}

export function documentPdf(quote: Quote, id: DocumentId): Promise<Uint8Array> {
  const document = DOCUMENTS.find((d) => d.id === id)!;
  const product = PRODUCT_LABELS[quote.product];
  const offer = quote.offers?.find((o) => o.formule === quote.chosen);
  const premium = offer ? [`prime annuelle ${plainAmount(offer.prime_annuelle_eur)} EUR`, `formule ${offer.libelle}`] : [];
  const body: PdfLine[] =
    id === 'devis'
      ? quoteLines(quote)
      : id === 'conditions-generales'
        ? [{ text: `Conditions générales – ${product}` }, { text: 'Article 1 – Objet du contrat.' }, { text: 'Article 2 – Garanties.' }]
        : [{ text: `Document d’information sur le produit d’assurance – ${product}` }, { text: 'Qu’est-ce qui est assuré ?' }];
  return minimalPdf({
    insurerName: INSURER_NAME,
    title: `${document.label} – ${product} – ${quote.reference}`,
    subject: `${INSURER_NAME} – ${document.label} – ${product}`,
    keywords: [INSURER_NAME, document.id, `reference ${quote.reference}`, ...(id === 'devis' ? premium : [])],
    createdAtMs: quote.createdAtMs,
    lines: [
      { text: INSURER_NAME, size: 20, bold: true },
      { text: `${document.label} – ${product}`, size: 14, bold: true },
      { text: `Référence : ${quote.reference}` },
      { text: `Établi le ${frenchDateTime(quote.createdAtMs)}` },
      { text: '' },
      ...body,
      { text: '' },
      { text: 'Document de démonstration sans valeur contractuelle.', size: 9 },
    ],
  });
}
