import { describe, expect, it } from 'vitest';
import { networkReason } from '../../server/sync/hub-client.js';
import { freePort } from '../helpers/free-port.js';

/** Why the hub got no answer, in words a person can act on, from fetch's cause rather than its "fetch failed". */
describe('networkReason', () => {
  it('words a refused connection from a real fetch, and the codes Node gives', async () => {
    // A port just freed: nothing listens there.
    const refused = await fetch(`http://127.0.0.1:${await freePort()}/healthz`).catch((err: unknown) => err);
    expect(networkReason(refused)).toBe('nothing answers on that port (the hub may be stopped) (ECONNREFUSED)');
    const noName = new TypeError('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND hub.invalid'), { code: 'ENOTFOUND' }),
    });
    expect(networkReason(noName)).toBe('no computer has this name (ENOTFOUND)');
    const odd = new TypeError('fetch failed', { cause: Object.assign(new Error('something rare'), { code: 'EWEIRD' }) });
    expect(networkReason(odd)).toBe('something rare (EWEIRD)');
    expect(networkReason(new Error('plain'))).toBe('plain');
  });
});
