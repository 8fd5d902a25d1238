import { describe, expect, it } from 'vitest';
import { loadPolicy, MAX_POLICY_BYTES, parsePolicy, policyFilePath, type PolicyFileSystem } from '../../server/policy.js';
import { DEFAULT_USER_SETTINGS, effectiveSettings, parseUserSettings, serverEnvironment } from '../../electron/settings.js';

const PATH = '/etc/courtier/policy.json';
const files = (content: Record<string, string | Error>): PolicyFileSystem => ({
  readFile(path) {
    const c = content[path];
    if (c === undefined) throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
    if (c instanceof Error) throw c;
    return Buffer.from(c);
  },
});

describe('the IT policy file', () => {
  it('lives in the machine-wide folder of each platform', () => {
    expect(policyFilePath('win32', { ProgramData: 'D:\\ProgramData' })).toBe('D:\\ProgramData\\Courtier\\policy.json');
    expect(policyFilePath('win32', {})).toBe('C:\\ProgramData\\Courtier\\policy.json');
    expect(policyFilePath('darwin')).toBe('/Library/Application Support/Courtier/policy.json');
    expect(policyFilePath('linux')).toBe('/etc/courtier/policy.json');
  });

  it('no file: no policy, no problem', () => {
    expect(loadPolicy(files({}), PATH)).toEqual({ policy: {}, path: PATH, present: false, problems: [] });
  });

  it('reads every field of a valid policy (a UTF-8 BOM from Notepad included)', () => {
    const policy = {
      publicBaseUrl: 'https://courtier.cabinet-dupont.lan:8787',
      allowLanSharing: false,
      sandbox: false,
      hostedSyncUrl: 'https://sync.courtier.example',
      autoUpdate: { enabled: true, channel: 'beta', url: 'https://updates.cabinet-dupont.fr/courtier/' },
    };
    const loaded = loadPolicy(files({ [PATH]: `\uFEFF${JSON.stringify(policy)}` }), PATH);
    expect(loaded).toEqual({ policy, path: PATH, present: true, problems: [] });
  });

  it('an unreadable file: defaults and a problem, never a throw', () => {
    const loaded = loadPolicy(files({ [PATH]: Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }) }), PATH);
    expect(loaded.policy).toEqual({});
    expect(loaded.present).toBe(true);
    expect(loaded.problems).toEqual([`${PATH}: cannot be read (EACCES); defaults apply.`]);
  });

  it('invalid JSON: defaults and a problem', () => {
    const loaded = loadPolicy(files({ [PATH]: '{ "sandbox": false, }' }), PATH);
    expect(loaded.policy).toEqual({});
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatch(/not valid JSON/);
  });

  it('not an object, or too big: defaults and a problem', () => {
    expect(parsePolicy('[1,2]', PATH).problems[0]).toMatch(/must hold a JSON object/);
    expect(parsePolicy('null', PATH).problems[0]).toMatch(/must hold a JSON object/);
    expect(parsePolicy(' '.repeat(MAX_POLICY_BYTES + 1), PATH).problems[0]).toMatch(/larger than/);
  });

  it('drops each invalid or unknown field with a problem, and keeps the valid ones (a typo never lifts a restriction)', () => {
    const loaded = parsePolicy(
      JSON.stringify({
        allowLanSharing: false,
        sandbox: 'no',
        publicBaseUrl: 'ftp://files.example',
        hostedSyncUrl: 'http://sync.example',
        allowLANSharing: true,
        autoUpdate: { enabled: false, channel: 'nightly', url: 'not a url', extra: 1 },
      }),
      PATH,
    );
    expect(loaded.policy).toEqual({ allowLanSharing: false, autoUpdate: { enabled: false } });
    expect(loaded.problems.join('\n')).toMatch(/"sandbox" ignored/);
    expect(loaded.problems.join('\n')).toMatch(/"publicBaseUrl" ignored/);
    expect(loaded.problems.join('\n')).toMatch(/"hostedSyncUrl" ignored \(an https URL\)/);
    expect(loaded.problems.join('\n')).toMatch(/unknown setting "allowLANSharing"/);
    expect(loaded.problems.join('\n')).toMatch(/"autoUpdate.channel" ignored/);
    expect(loaded.problems.join('\n')).toMatch(/"autoUpdate.url" ignored/);
    expect(loaded.problems.join('\n')).toMatch(/unknown setting "autoUpdate.extra"/);
    expect(loaded.problems).toHaveLength(7);
  });

  it('autoUpdate that is not an object is a problem', () => {
    expect(parsePolicy('{"autoUpdate": true}', PATH)).toMatchObject({
      policy: {},
      problems: [`${PATH}: "autoUpdate" ignored (must be an object).`],
    });
  });
});

describe('settings in force', () => {
  it('the policy overrides the broker’s settings and marks them as managed', () => {
    const user = { ...DEFAULT_USER_SETTINGS, sandbox: true, publicBaseUrl: 'http://my-pc:8787', updateChannel: 'alpha' as const };
    const effective = effectiveSettings(user, {
      allowLanSharing: false,
      sandbox: false,
      publicBaseUrl: 'https://courtier.lan',
      hostedSyncUrl: 'https://sync.example',
      autoUpdate: { channel: 'latest', url: 'https://updates.example/' },
    });
    expect(effective).toMatchObject({
      lanSharingAllowed: false,
      sandbox: false,
      publicBaseUrl: 'https://courtier.lan',
      hostedSyncUrl: 'https://sync.example',
      updateChannel: 'latest',
      autoUpdate: { enabled: true, channel: 'latest', url: 'https://updates.example/' },
    });
    expect(effective.managed).toEqual(['lanSharing', 'publicBaseUrl', 'sandbox', 'hostedSyncUrl', 'updateChannel', 'autoUpdate']);
  });

  it('without a policy the broker decides', () => {
    const effective = effectiveSettings({ ...DEFAULT_USER_SETTINGS, sandbox: false }, {});
    expect(effective).toMatchObject({ lanSharingAllowed: true, sandbox: false, managed: [] });
  });

  it('settings.json: invalid content gives the defaults and a problem', () => {
    expect(parseUserSettings(null)).toEqual({ settings: DEFAULT_USER_SETTINGS, problem: null });
    expect(parseUserSettings('{"robotsHeaded": true}').settings.robotsHeaded).toBe(true);
    expect(parseUserSettings('{"lastPort": -1}').problem).toMatch(/invalid/);
    expect(parseUserSettings('{').problem).toMatch(/not valid JSON/);
  });

  it('the server environment: loopback on the last port, policy values, and nothing inherited that the desktop controls', () => {
    const settings = effectiveSettings(
      { ...DEFAULT_USER_SETTINGS, lastPort: 41000, robotsHeaded: true },
      { allowLanSharing: false, sandbox: false, publicBaseUrl: 'https://courtier.lan' },
    );
    const env = serverEnvironment(
      {
        PATH: '/usr/bin',
        COURTIER_HOST: '0.0.0.0',
        COURTIER_SANDBOX: 'true',
        NODE_OPTIONS: '--inspect',
        COURTIER_LOG_LEVEL: 'debug',
        COURTIER_POLICY_FILE: '/dev/null',
      },
      settings,
      { dataDir: '/home/b/.config/Courtier/data', loginTokenSha256: 'f'.repeat(64), policyFile: '/etc/courtier/policy.json' },
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      COURTIER_LOG_LEVEL: 'debug',
      COURTIER_HOST: '127.0.0.1',
      COURTIER_PORT: '41000',
      COURTIER_DATA_DIR: '/home/b/.config/Courtier/data',
      COURTIER_POLICY_FILE: '/etc/courtier/policy.json',
      COURTIER_SANDBOX: 'false',
      COURTIER_ROBOTS_HEADED: 'true',
      COURTIER_DESKTOP_LOGIN_TOKEN_SHA256: 'f'.repeat(64),
      COURTIER_PUBLIC_BASE_URL: 'https://courtier.lan',
    });
  });

  it('the policy can switch the robots off install-wide: the server gets COURTIER_ROBOTS_DISABLED, whatever the shell inherited', () => {
    const policy = parsePolicy('{"robotsDisabled": true}', PATH);
    expect(policy).toMatchObject({ policy: { robotsDisabled: true }, problems: [] });
    const settings = effectiveSettings(DEFAULT_USER_SETTINGS, policy.policy);
    expect(settings).toMatchObject({ robotsDisabledByPolicy: true, managed: ['robotsDisabled'] });
    expect(
      serverEnvironment({}, settings, { dataDir: '/d', loginTokenSha256: 'a'.repeat(64), policyFile: PATH }).COURTIER_ROBOTS_DISABLED,
    ).toBe('true');
    // Without the policy, a value inherited from the shell's environment never reaches the server.
    expect(
      serverEnvironment({ COURTIER_ROBOTS_DISABLED: 'true' }, effectiveSettings(DEFAULT_USER_SETTINGS, {}), {
        dataDir: '/d',
        loginTokenSha256: 'a'.repeat(64),
        policyFile: PATH,
      }),
    ).not.toHaveProperty('COURTIER_ROBOTS_DISABLED');
  });

  it('the desktop keeps the service on loopback: the office shares it through the LAN mode (HTTPS), whatever an old settings file says', () => {
    const { settings } = parseUserSettings('{"lanSharing": true, "lanPort": 8787, "lastPort": 41000}');
    const env = serverEnvironment({}, effectiveSettings(settings, { allowLanSharing: true }), {
      dataDir: '/d',
      loginTokenSha256: 'a'.repeat(64),
      policyFile: PATH,
    });
    expect(env).toMatchObject({ COURTIER_HOST: '127.0.0.1', COURTIER_PORT: '41000' });
  });

  it('the policy presets the LAN mode field by field; a bad field is dropped, allowLanSharing: false still holds', () => {
    const loaded = parsePolicy(
      '{"allowLanSharing": false, "lan": {"enabled": true, "port": 8443, "names": ["courtier.cabinet.lan"], "certificateFile": "/etc/c.pem"}}',
      PATH,
    );
    expect(loaded.policy).toEqual({ allowLanSharing: false });
    expect(loaded.problems.join(' ')).toMatch(/"lan" ignored \(.*certificateFile and keyFile go together/);
    const preset = parsePolicy('{"lan": {"enabled": true, "addresses": ["10.20.0.5"], "names": ["Courtier.Cabinet.LAN"]}}', PATH);
    expect(preset).toMatchObject({
      policy: { lan: { enabled: true, addresses: ['10.20.0.5'], names: ['courtier.cabinet.lan'] } },
      problems: [],
    });
  });
});
