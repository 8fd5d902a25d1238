import { RobotError } from './adapter.js';
import type { HUMAN_STEP_KINDS } from './manifest.js';

/** A kind of help a manifest declares in `humanSteps`. */
export type HumanStepKind = (typeof HUMAN_STEP_KINDS)[number];

/** The largest captcha image a robot may show a person, decoded. */
export const HUMAN_STEP_IMAGE_MAX_BYTES = 200 * 1024;

/** One choice of a question: what the robot gets back, and what the person reads. */
export interface HumanChoice {
  value: string;
  label: string;
}

/** What a robot asks a person for mid-run, and what the person is shown. */
export type HumanStep =
  /** A one-time code the portal sent by SMS, by e-mail, or that an authenticator app shows. */
  | { kind: 'otp'; channel: 'sms' | 'email' | 'app'; prompt: string }
  /** An approval the person gives in the insurer's app; they then say they approved it. */
  | { kind: 'app_approval'; prompt: string }
  /** A captcha's image, whose text the person types. */
  | { kind: 'captcha'; prompt: string; image: { mime: 'image/png' | 'image/jpeg'; base64: string } }
  /** A question the portal asks that the dicData did not answer: free text, or one of the choices. */
  | { kind: 'question'; prompt: string; choices?: readonly HumanChoice[] };

/** What askHuman resolves with: true for an approval, the typed text or the chosen value otherwise. */
export type HumanAnswer<S extends HumanStep> = S extends { kind: 'app_approval' } ? true : string;

/** The manifest's kind a step needs declared. */
export function humanStepKind(step: HumanStep): HumanStepKind {
  return step.kind === 'otp' ? `otp_${step.channel}` : step.kind;
}

/** Why a step cannot be shown to a person, or null when it can. */
function stepProblem(step: HumanStep): string | null {
  if (step.prompt.trim() === '') return 'its prompt is empty';
  if (step.kind === 'captcha') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(step.image.base64)) return 'its image is not base64';
    if (Buffer.byteLength(step.image.base64, 'base64') > HUMAN_STEP_IMAGE_MAX_BYTES) return 'its image is larger than 200 KB';
  }
  if (step.kind === 'question' && step.choices) {
    if (step.choices.length === 0) return 'it offers no choice';
    if (new Set(step.choices.map((c) => c.value)).size !== step.choices.length) return 'two of its choices have the same value';
  }
  return null;
}

/** What a run's host does to ask a person: resolves with their text (an approval: "approved"). */
export type AskPerson = (step: HumanStep) => Promise<string>;

/**
 * A robot context's askHuman, requestMfa and humanPresent over the host's way of asking a person.
 * `declared` is the manifest's humanSteps (undefined: an insurer given in code, which may ask
 * anything): a step the manifest does not declare, or one that cannot be shown, fails the run before
 * anyone is asked; so does any step when `present` is false (nobody there to answer).
 */
export function humanSteps(
  declared: readonly HumanStepKind[] | undefined,
  ask: AskPerson,
  present = true,
): {
  askHuman: <S extends HumanStep>(step: S) => Promise<HumanAnswer<S>>;
  requestMfa: (challenge: string) => Promise<string>;
  humanPresent: boolean;
} {
  const askHuman = async <S extends HumanStep>(step: S): Promise<HumanAnswer<S>> => {
    const kind = humanStepKind(step);
    if (!present) {
      throw new RobotError(
        'technical',
        'human_required',
        `The portal asks a person for ${kind}, and nobody is there to answer: the cabinet's settings stop such jobs instead of waiting.`,
        { kind },
      );
    }
    if (declared && !declared.includes(kind)) {
      throw new RobotError(
        'technical',
        'human_step_undeclared',
        `The robot asked a person for ${kind}, which its manifest's humanSteps does not declare.`,
        {
          kind,
          declared: [...declared],
        },
      );
    }
    const problem = stepProblem(step);
    if (problem) throw new RobotError('technical', 'human_step_invalid', `The robot asked a person for ${kind}, but ${problem}.`, { kind });
    const answer = await ask(step);
    return (step.kind === 'app_approval' ? true : answer) as HumanAnswer<S>;
  };
  return { askHuman, requestMfa: (challenge) => askHuman({ kind: 'otp', channel: 'sms', prompt: challenge }), humanPresent: present };
}
