import type { HumanStep } from '@courtier/adapter-kit';
import type { Job, MfaAnswer, MfaKind } from '../../shared/automation.js';

/** What a waiting job keeps of its step (the jobs table's mfa_step): never the image, which stays with its robot. */
interface StoredMfaStep {
  kind: MfaKind;
  channel: 'sms' | 'email' | 'app' | null;
  choices: { value: string; label: string }[] | null;
}

export function storedMfaStep(step: HumanStep): string {
  const stored: StoredMfaStep = {
    kind: step.kind,
    channel: step.kind === 'otp' ? step.channel : null,
    choices: step.kind === 'question' && step.choices ? step.choices.map(({ value, label }) => ({ value, label })) : null,
  };
  return JSON.stringify(stored);
}

/** A job's stored step; a job that waited before steps were stored asked for an SMS code. */
function readMfaStep(text: string | null): StoredMfaStep {
  return text === null ? { kind: 'otp', channel: 'sms', choices: null } : (JSON.parse(text) as StoredMfaStep);
}

/** The API's view of a waiting job's step; `imageUrl` is where its captcha is served. */
export function mfaStepView(
  text: string | null,
  imageUrl: string,
): Pick<NonNullable<Job['mfa']>, 'kind' | 'channel' | 'choices' | 'image_url'> {
  const step = readMfaStep(text);
  return { kind: step.kind, channel: step.channel, choices: step.choices, image_url: step.kind === 'captcha' ? imageUrl : null };
}

/** What the robot gets for a person's answer, or null when the answer does not fit the step. */
export function answerForStep(text: string | null, answer: MfaAnswer): string | null {
  const step = readMfaStep(text);
  if (step.kind === 'otp' || step.kind === 'captcha') return 'code' in answer ? answer.code : null;
  if (step.kind === 'app_approval') return 'approved' in answer ? 'approved' : null;
  if (!('answer' in answer)) return null;
  return step.choices === null || step.choices.some((c) => c.value === answer.answer) ? answer.answer : null;
}
