import { resetPasswordByEmail } from '../account/service.js';
import { CLI_ACTOR } from '../audit/service.js';
import { ApiError, UsageError } from '../errors.js';
import { parse, print, required, withDeps, type CliIo } from './common.js';

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * `courtier users reset-password --email E [--cabinet ID]`: for an administrator locked out of the
 * console. Whoever holds the data dir can do this anyway; the reset ends the account's sessions and
 * connected apps, and the new temporary password is printed once.
 */
export async function runUsers(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub !== 'reset-password') throw new UsageError(`unknown users command "${sub ?? ''}"; use reset-password`);
  const v = parse(rest, { email: { type: 'string' }, cabinet: { type: 'string' } });
  const email = required(v, 'email').trim().toLowerCase();
  const reset = await withDeps(v['data-dir'], io, (deps) => resetPasswordByEmail(deps, email, v.cabinet, CLI_ACTOR)).catch(
    (err: unknown) => {
      // An email with accounts in several cabinets: which one is the command line's to say.
      if (err instanceof ApiError && v.cabinet === undefined && isObject(err.details) && 'cabinets' in err.details)
        throw new UsageError(`${err.message} Name it with --cabinet.`);
      throw err;
    },
  );
  print(
    io,
    v.json,
    { email: reset.user.email, user_id: reset.user.user_id, temporary_password: reset.temporaryPassword },
    `Password of ${reset.user.email} reset. Its sessions and connected apps have ended.\n` +
      `Temporary password (shown only this once; hand it over in person):\n\n  ${reset.temporaryPassword}\n\n` +
      `At the next sign-in, the console asks for a new password before anything else.` +
      (reset.user.disabled_at === null ? '' : `\nThe account is disabled: another administrator must enable it on the Users page.`),
  );
}
