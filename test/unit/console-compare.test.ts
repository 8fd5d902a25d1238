import { describe, expect, it } from 'vitest';
import { RISK_EXAMPLES, autoRiskSchema, productJsonSchema } from '@courtier/adapter-kit';
import type { Comparison } from '../../shared/comparaisons.js';
import { guaranteesOffered, marks, missingGuarantees } from '../../renderer/src/pages/compare/offers.js';
import { questionField, questionsOfRefusal, toAnswers } from '../../renderer/src/pages/compare/questions.js';
import { riskGroups, riskIssuesByField, toRisk } from '../../renderer/src/pages/compare/riskForm.js';

/** The Compare page's pure parts: the form from the risk model, the answers, the offers' marks and filter. */

const doc = { json_schema: productJsonSchema(autoRiskSchema), example: RISK_EXAMPLES.auto };

describe('the risk form', () => {
  it('groups the fields by the model’s objects, in the language asked, and builds the nested risk back', () => {
    const groups = riskGroups(doc, 'en', 'Cover');
    expect(groups.map((g) => [g.key, g.label])).toEqual([
      ['conducteur', 'Main driver'],
      ['vehicule', 'Vehicle'],
      ['usage', 'Use'],
      ['', 'Cover'],
    ]);
    const crm = groups[0]!.fields.find((f) => f.key === 'conducteur.crm')!;
    expect([crm.kind, crm.required, crm.min, crm.max]).toEqual(['number', true, 0.5, 3.5]);
    expect(groups[1]!.fields.find((f) => f.key === 'vehicule.puissance_fiscale')!.required).toBe(false);
    expect(riskGroups(doc, 'fr', 'Couverture')[3]!.fields[0]!.optionLabels.etendue).toBe('Étendue (tous risques)');

    const risk = toRisk(groups, {
      'conducteur.nom': ' Martin ',
      'conducteur.crm': '0,72',
      'vehicule.marque': '',
      'usage.kilometrage_annuel': 'lots',
      couverture: 'etendue',
    });
    // Empty fields are left out for the service to name; what is not a number goes as typed, to be called invalid.
    expect(risk).toEqual({
      conducteur: { nom: 'Martin', crm: 0.72 },
      vehicule: {},
      usage: { kilometrage_annuel: 'lots' },
      couverture: 'etendue',
    });
  });

  it('puts each problem beside its field; a group left out marks its required fields', () => {
    const groups = riskGroups(doc, 'en', 'Cover');
    const issue = (path: string) => ({ path, message: 'm', code: 'invalid_type' });
    const byField = riskIssuesByField([issue('body.risque.vehicule.marque'), issue('body.risque.usage'), issue('body.ligne')], groups);
    expect(Object.keys(byField).sort()).toEqual(['', 'usage.code_postal', 'usage.usage', 'vehicule.marque']);
  });
});

describe('insurers’ own questions', () => {
  const question = { code: 'puissance_fiscale', label: { fr: 'Puissance', en: 'Horsepower' }, type: 'integer' as const, choices: null };
  it('become fields keyed by insurer, and answers typed as the insurer asks', () => {
    expect(questionField('tradition', question, 'en')).toMatchObject({
      key: 'tradition.puissance_fiscale',
      label: 'Horsepower',
      kind: 'integer',
    });
    expect(toAnswers({ tradition: [question], horizon: [] }, { 'tradition.puissance_fiscale': ' 5 ' })).toEqual({
      tradition: { puissance_fiscale: 5 },
    });
    expect(toAnswers({ tradition: [question] }, { 'tradition.puissance_fiscale': '' })).toEqual({});
    expect(questionsOfRefusal({ questions: { tradition: [question] } })).toEqual({ tradition: [question] });
    expect(questionsOfRefusal('nonsense')).toEqual({});
  });
});

describe('offers side by side', () => {
  const offer = (formule: string, prime: number, included: string[]) => ({
    formule,
    libelle: formule,
    prime_annuelle_eur: prime,
    prime_mensuelle_eur: null,
    franchise_eur: null,
    garanties: ['rc', 'vol', 'bris'].map((code) => ({ code, libelle: code, incluse: included.includes(code), plafond_eur: null })),
  });
  const result = (compagnie: string, offres: ReturnType<typeof offer>[]) =>
    ({ compagnie, offres }) as unknown as Comparison['resultats'][number];
  const results = [
    result('a', [offer('tiers', 300, ['rc']), offer('tous', 600, ['rc', 'vol', 'bris'])]),
    result('b', [offer('mid', 450, ['rc', 'vol'])]),
  ];

  it('marks the cheapest and the broadest among the offers that have every wanted guarantee', () => {
    expect(marks(results, [])).toEqual({ cheapest: 'a/tiers', broadest: 'a/tous' });
    expect(marks(results, ['vol'])).toEqual({ cheapest: 'b/mid', broadest: 'a/tous' });
    expect(marks(results, ['vol', 'bris'])).toEqual({ cheapest: 'a/tous', broadest: 'a/tous' });
    expect(marks(results, ['nope'])).toEqual({ cheapest: null, broadest: null });
    expect(missingGuarantees(results[0]!.offres[0]!, ['vol', 'rc', 'bris'])).toEqual(['vol', 'bris']);
    expect(guaranteesOffered(results, ['bris', 'rc'])).toEqual(['bris', 'rc', 'vol']);
  });
});
