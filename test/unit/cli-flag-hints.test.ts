import { describe, expect, it } from 'vitest';
import { withFlagHints } from '../../server/cli/common.js';
import { ApiError } from '../../server/errors.js';

/** Services word their errors for every caller; the CLI adds which of its flags would do. */
describe('withFlagHints', () => {
  it('adds the flag to an error of a hinted code, keeping its code and details', async () => {
    const refused = withFlagHints(
      () => Promise.reject(new ApiError('lan_name_outside_ca', 'They need a new office CA.', { outside: ['x.fr'] })),
      {
        lan_name_outside_ca: 'Run it again with --new-ca to make one.',
      },
    );
    await expect(refused).rejects.toMatchObject({
      code: 'lan_name_outside_ca',
      message: 'They need a new office CA. Run it again with --new-ca to make one.',
      details: { outside: ['x.fr'] },
    });
  });

  it('leaves other errors and results as they are', async () => {
    const other = new ApiError('not_found', 'No such cabinet.');
    await expect(withFlagHints(() => Promise.reject(other), { lan_name_outside_ca: 'x' })).rejects.toBe(other);
    await expect(withFlagHints(() => Promise.resolve(42), { lan_name_outside_ca: 'x' })).resolves.toBe(42);
  });
});
