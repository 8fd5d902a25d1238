import { describe, expect, it } from 'vitest';
import { autoRiskSchema, homeRiskSchema, productJsonSchema, RISK_EXAMPLES, type AutoRisk, type HomeRisk } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';
import { mapRisk, placeholderAnswers } from '../../server/insurers/risk-mapping.js';
import { HORIZON_PRODUCTS } from '../../insurers/horizon/src/products.js';
import { HORIZON_RISKS } from '../../insurers/horizon/src/risks.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';
import { SANDBOX_RISKS } from '../../insurers/sandbox/src/risks.js';
import { TRADITION_PRODUCTS } from '../../insurers/tradition/src/products.js';
import { TRADITION_RISKS } from '../../insurers/tradition/src/risks.js';

/** The demo insurers' mappings of the common risk, as Courtier applies them (their robots do not run here). */
const insurer = (code: string, name: string, products: Insurer['products'], risks: Insurer['risks']): Insurer => ({
  code,
  name,
  version: '1.0.0',
  products,
  risks,
  run: () => Promise.reject(new Error('not run here')),
});
const sandbox = insurer('sandbox', 'Sandbox Assurances', SANDBOX_PRODUCTS, SANDBOX_RISKS);
const horizon = insurer('horizon', 'Horizon Direct', HORIZON_PRODUCTS, HORIZON_RISKS);
const tradition = insurer('tradition', 'Mutuelle Tradition', TRADITION_PRODUCTS, TRADITION_RISKS);

const car = RISK_EXAMPLES.auto;
const home = RISK_EXAMPLES.mrh;

describe('the common risk model', () => {
  it('holds examples that pass its schemas, with labels in French and English', () => {
    expect(autoRiskSchema.parse(car)).toEqual(car);
    expect(homeRiskSchema.parse(home)).toEqual(home);
    const schema = productJsonSchema(autoRiskSchema) as {
      properties: {
        conducteur: { title: string; properties: Record<string, Record<string, unknown>> };
        couverture: Record<string, unknown>;
      };
    };
    expect(schema.properties.conducteur.title).toBe('Conducteur principal');
    expect(schema.properties.conducteur.properties.crm).toMatchObject({
      title: 'Bonus-malus (CRM, 0,50 à 3,50)',
      'x-title-en': 'No-claims coefficient (0.50 to 3.50)',
    });
    expect(schema.properties.couverture).toMatchObject({
      enum: ['essentielle', 'intermediaire', 'etendue'],
      'x-enum-labels-en': {
        essentielle: 'Essential (the legal minimum)',
        intermediaire: 'Intermediate',
        etendue: 'Extended (comprehensive)',
      },
    });
  });
});

describe('each demo insurer maps the common risk to its own product', () => {
  it('car: each insurer’s field names, codes and formula for the same risk', () => {
    expect(mapRisk(sandbox, 'auto', car, {})).toEqual({
      ok: true,
      produit: 'auto',
      dicData: expect.objectContaining({
        insured_name: 'Léa Martin',
        licence_date: '2004-06-15',
        bonus_malus: 0.72,
        usage: 'mixte',
        formula: 'tous_risques',
        postcode: '33000',
      }) as unknown,
    });
    expect(mapRisk(horizon, 'auto', car, {})).toMatchObject({
      ok: true,
      produit: 'voiture',
      dicData: {
        prenom: 'Léa',
        nom: 'Martin',
        annee_permis: 2004,
        kilometrage_annuel: 'de_5000_a_10000',
        stationnement: 'garage_ferme',
        formule: 'tous_risques',
      },
    });
    expect(mapRisk(tradition, 'auto', car, {})).toMatchObject({
      ok: true,
      produit: 'automobile',
      dicData: { nom_souscripteur: 'Léa Martin', puissance_fiscale: 5, usage: 'PT', garantie: 'TR' },
    });
  });

  it('home: codes of each insurer, and a flat’s floor where one asks for it', () => {
    expect(mapRisk(sandbox, 'mrh', home, {})).toMatchObject({
      ok: true,
      dicData: { dwelling_type: 'appartement', rooms: 3, occupant_status: 'locataire' },
    });
    expect(mapRisk(horizon, 'mrh', home, {})).toMatchObject({
      ok: true,
      dicData: { type_bien: 'appartement', etage: 2, formule: 'confort', alarme: false },
    });
    expect(mapRisk(tradition, 'mrh', home, {})).toMatchObject({ ok: true, dicData: { type_habitation: 'A', qualite: 'L', nb_pieces: 3 } });
  });

  it('asks what the risk leaves open, with the insurer named, then takes valid answers only', () => {
    const bare: AutoRisk = {
      ...car,
      vehicule: { marque: 'Renault', modele: 'Clio', date_mise_circulation: '2022-04-01' },
      usage: { usage: 'prive', code_postal: '33000' },
    };
    expect(mapRisk(sandbox, 'auto', bare, {})).toMatchObject({ ok: true });
    const horizonAsks = mapRisk(horizon, 'auto', bare, {});
    expect(horizonAsks).toMatchObject({
      ok: false,
      reason: 'answers_missing',
      message: 'Horizon Direct asks: Kilométrage annuel, Stationnement la nuit.',
    });
    expect(mapRisk(tradition, 'auto', bare, {})).toMatchObject({
      ok: false,
      reason: 'answers_missing',
      questions: [{ code: 'puissance_fiscale', type: 'integer' }],
    });
    expect(mapRisk(horizon, 'auto', bare, { kilometrage_annuel: 12000, stationnement: 'garage_ferme' })).toMatchObject({
      ok: false,
      reason: 'answers_invalid',
      questions: [{ code: 'kilometrage_annuel' }],
    });
    expect(mapRisk(horizon, 'auto', bare, { kilometrage_annuel: 'plus_de_20000', stationnement: 'voie_publique' })).toMatchObject({
      ok: true,
      dicData: { kilometrage_annuel: 'plus_de_20000', stationnement: 'voie_publique' },
    });
    expect(mapRisk(tradition, 'auto', bare, { puissance_fiscale: 7.5 })).toMatchObject({ reason: 'answers_invalid' });
    if (!horizonAsks.ok && horizonAsks.reason === 'answers_missing')
      expect(mapRisk(horizon, 'auto', bare, placeholderAnswers(horizonAsks.questions))).toMatchObject({ ok: true });
  });

  it('says when an insurer declines the risk, or when its own limits refuse a value', () => {
    const landlord: HomeRisk = { ...home, occupation: 'proprietaire_non_occupant' };
    expect(mapRisk(sandbox, 'mrh', landlord, {})).toEqual({
      ok: false,
      reason: 'risk_declined',
      message: 'Sandbox Assurances n’assure pas les propriétaires non occupants.',
    });
    expect(mapRisk(tradition, 'mrh', landlord, {})).toMatchObject({ ok: true, dicData: { qualite: 'PNO' } });
    // Mutuelle Tradition insures contents from 2 000 €: its schema says so, named in the message.
    const small = mapRisk(tradition, 'mrh', { ...home, capital_mobilier_eur: 500 }, {});
    expect(small).toMatchObject({ ok: false, reason: 'risk_not_accepted', produit: 'habitation' });
    expect(small.ok ? null : small.message).toMatch(/^Mutuelle Tradition does not accept this risk for .+: capital_mobilier_eur /);
    expect(mapRisk({ ...tradition, risks: {} }, 'auto', car, {})).toMatchObject({ reason: 'line_not_priced' });
  });

  it('says a mapping that throws, without letting it through', () => {
    const broken = insurer('broken', 'Broken', SANDBOX_PRODUCTS, {
      auto: {
        produit: 'auto',
        questions: () => [],
        dicData: () => {
          throw new Error('boom\nstack');
        },
      },
    });
    expect(mapRisk(broken, 'auto', car, {})).toEqual({
      ok: false,
      reason: 'mapping_failed',
      message: "Broken's mapping of the line auto failed: boom",
    });
  });
});
