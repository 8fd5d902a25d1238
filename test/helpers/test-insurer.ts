import { z } from 'zod';
import { RobotError, type HumanStep, type RiskMappings, type RobotContext, type RobotResult } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';

export const TEST_PDF = Buffer.from('%PDF-1.4\n% test insurer quote\n%%EOF\n');

/** One run of the robot, written by the test. */
export type Script = (ctx: RobotContext, input: { produit: string; dicData: Record<string, unknown> }) => Promise<RobotResult>;

/** Prices at the given tarif; pdf null means the portal gave no PDF (a partial result). */
export const succeed =
  (tarif = 432.1, pdf: Buffer | null = TEST_PDF): Script =>
  async (ctx) => {
    ctx.progress('login', 10);
    ctx.progress('pricing form', 50);
    ctx.markSubmitted();
    ctx.progress('reading the result', 90);
    return pdf
      ? { tarif_eur: tarif, suspens: 'Relevé d’information', pdf, outcome: 'complete' }
      : { tarif_eur: tarif, suspens: 'Relevé d’information', outcome: 'partial' };
  };

export const failWith =
  (kind: 'technical' | 'business', code = kind === 'technical' ? 'portal_down' : 'risk_declined'): Script =>
  async () => {
    throw new RobotError(kind, code, kind === 'technical' ? 'The portal answered 503.' : 'The insurer declined the risk.');
  };

/** Asks for a code, then prices with the tarif derived from it, so tests can see the code arrived. */
export const withMfa =
  (challenge = 'Code sent by SMS to 06 •• •• •• 42'): Script =>
  async (ctx) => {
    ctx.progress('login', 10);
    const code = await ctx.requestMfa(challenge);
    ctx.progress('pricing form', 60);
    return { tarif_eur: Number(code), pdf: TEST_PDF, outcome: 'complete' };
  };

/** Asks a person for `step`, then prices at 100 with what they answered as the pending conditions (an approval: "true"). */
export const withHumanStep =
  (step: HumanStep): Script =>
  async (ctx) => {
    ctx.progress('login', 10);
    const answer = await ctx.askHuman(step);
    return { tarif_eur: 100, suspens: `answer: ${String(answer)}`, pdf: TEST_PDF, outcome: 'complete' };
  };

/** A gate the test opens: the robot waits on it (honouring cancellation) before succeeding. */
export function gated(submitBefore = false): { script: Script; open: () => void; entered: Promise<void> } {
  let open: () => void = () => undefined;
  let signalEntered: () => void = () => undefined;
  const entered = new Promise<void>((resolve) => (signalEntered = resolve));
  const gate = new Promise<void>((resolve) => (open = resolve));
  const script: Script = async (ctx) => {
    ctx.progress('on the pricing form', 40);
    if (submitBefore) ctx.markSubmitted();
    signalEntered();
    await new Promise<void>((resolve, reject) => {
      gate.then(resolve, reject);
      ctx.signal.addEventListener('abort', () => reject(new RobotError('technical', 'cancelled', 'aborted')));
    });
    return { tarif_eur: 100, pdf: TEST_PDF, outcome: 'complete' };
  };
  return { script, open: () => open(), entered };
}

export interface TestInsurer extends Insurer {
  /** Scripts for the next runs, in order; runs without one succeed. */
  queue(...scripts: Script[]): void;
  runs: { produit: string; dicData: Record<string, unknown>; login: string; signal: AbortSignal }[];
}

/** The test insurers' car line: the common risk made into their product auto's dicData. */
export const TEST_AUTO_LINE: RiskMappings = {
  auto: {
    produit: 'auto',
    questions: () => [],
    dicData: (risk) => ({
      postcode: risk.usage.code_postal,
      birth_date: risk.conducteur.date_naissance,
      formula: risk.couverture === 'etendue' ? 'tous_risques' : 'tiers',
      insured_name: `${risk.conducteur.prenom} ${risk.conducteur.nom}`,
    }),
  },
};

/** An insurer adapter written for the tests: product auto (quote) and attestation (routine). */
export function createTestInsurer(code = 'testco', name = 'Test Assurances'): TestInsurer {
  const scripts: Script[] = [];
  const runs: TestInsurer['runs'] = [];
  return {
    code,
    name,
    version: '1.0.0',
    products: [
      {
        code: 'auto',
        label: 'Assurance auto',
        kind: 'quote',
        schema: z.object({
          postcode: z
            .string()
            .regex(/^\d{5}$/)
            .describe('Code postal'),
          birth_date: z.iso.date().describe('Date de naissance du conducteur'),
          formula: z.enum(['tiers', 'tous_risques']).default('tiers').describe('Formule'),
          insured_name: z.string().min(2).optional().describe('Nom de l’assuré'),
        }),
        example: { postcode: '69003', birth_date: '1984-03-09', formula: 'tiers' },
      },
      {
        code: 'attestation',
        label: 'Attestation d’assurance',
        kind: 'routine',
        schema: z.object({ policy_number: z.string().min(3).describe('Numéro de contrat') }),
        example: { policy_number: 'POL-123' },
      },
    ],
    queue: (...next) => void scripts.push(...next),
    runs,
    async run(ctx, input) {
      runs.push({ ...input, login: ctx.credentials().login, signal: ctx.signal });
      const script = scripts.shift() ?? succeed();
      return script(ctx, input);
    },
  };
}
