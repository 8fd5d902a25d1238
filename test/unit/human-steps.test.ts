import { describe, expect, it } from 'vitest';
import { humanSteps, RobotError, type HumanStep } from '@courtier/adapter-kit';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/** A host that records what was asked and answers with `reply`. */
function host(declared: Parameters<typeof humanSteps>[0], reply = '123456') {
  const asked: HumanStep[] = [];
  const bound = humanSteps(declared, async (step) => {
    asked.push(step);
    return reply;
  });
  return { ...bound, asked };
}

const PNG = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');

async function refusal(promise: Promise<unknown>): Promise<RobotError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RobotError);
  return err as RobotError;
}

describe('askHuman', () => {
  it('asks a declared one-time code and resolves with what the person typed', async () => {
    const { askHuman, asked } = host(['otp_email']);
    await expect(askHuman({ kind: 'otp', channel: 'email', prompt: 'Code sent to j•••@x.fr' })).resolves.toBe('123456');
    expect(asked).toEqual([{ kind: 'otp', channel: 'email', prompt: 'Code sent to j•••@x.fr' }]);
  });

  it('resolves an approval with true, a captcha and a question with the text', async () => {
    const { askHuman } = host(['app_approval', 'captcha', 'question'], 'yes');
    await expect(askHuman({ kind: 'app_approval', prompt: 'Approve in the app' })).resolves.toBe(true);
    await expect(askHuman({ kind: 'captcha', prompt: 'Type the text', image: { mime: 'image/png', base64: PNG } })).resolves.toBe('yes');
    const choices = [
      { value: 'yes', label: 'Oui' },
      { value: 'no', label: 'Non' },
    ];
    await expect(askHuman({ kind: 'question', prompt: 'Garage ?', choices })).resolves.toBe('yes');
  });

  it('keeps requestMfa as an SMS code', async () => {
    const { requestMfa, asked } = host(['otp_sms']);
    await expect(requestMfa('Code sent by SMS')).resolves.toBe('123456');
    expect(asked).toEqual([{ kind: 'otp', channel: 'sms', prompt: 'Code sent by SMS' }]);
  });

  it('refuses a kind the manifest does not declare, before asking anyone', async () => {
    const { askHuman, requestMfa, asked } = host(['otp_app']);
    const err = await refusal(askHuman({ kind: 'question', prompt: 'Garage ?' }));
    expect(err).toMatchObject({ kind: 'technical', code: 'human_step_undeclared', details: { kind: 'question', declared: ['otp_app'] } });
    expect((await refusal(requestMfa('SMS'))).code).toBe('human_step_undeclared');
    expect(asked).toEqual([]);
  });

  it('lets an insurer given in code (no manifest) ask anything', async () => {
    const { askHuman } = host(undefined);
    await expect(askHuman({ kind: 'otp', channel: 'app', prompt: 'Authenticator code' })).resolves.toBe('123456');
  });

  it('refuses a step nobody could answer: an image over 200 KB, no choices, twice the same value', async () => {
    const { askHuman, asked } = host(undefined);
    const big = Buffer.alloc(200 * 1024 + 1).toString('base64');
    const image = { mime: 'image/jpeg', base64: big } as const;
    expect((await refusal(askHuman({ kind: 'captcha', prompt: 'Type', image }))).code).toBe('human_step_invalid');
    expect((await refusal(askHuman({ kind: 'question', prompt: 'Q', choices: [] }))).code).toBe('human_step_invalid');
    const twice = [
      { value: 'a', label: 'A' },
      { value: 'a', label: 'B' },
    ];
    expect((await refusal(askHuman({ kind: 'question', prompt: 'Q', choices: twice }))).code).toBe('human_step_invalid');
    expect((await refusal(askHuman({ kind: 'app_approval', prompt: '  ' }))).code).toBe('human_step_invalid');
    expect(asked).toEqual([]);
  });

  it('holds an installed package to its manifest: the sandbox declares SMS codes only', async () => {
    const insurer = sandboxInsurer({ portalUrl: () => 'http://127.0.0.1:1/sandbox/insurer' });
    expect(insurer.humanSteps).toEqual(['otp_sms']);
    const { askHuman } = host(insurer.humanSteps);
    expect((await refusal(askHuman({ kind: 'app_approval', prompt: 'Approve' }))).code).toBe('human_step_undeclared');
  });
});
