import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);
// js-yaml comes with electron-builder (no types are installed for it): used untyped, here only.
const yaml = require('js-yaml') as { load(text: string): unknown };

function loadConfig(): Record<string, unknown> {
  return yaml.load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as Record<string, unknown>;
}

describe('electron-builder.yml', () => {
  it('is valid against the JSON schema electron-builder ships (app-builder-lib/scheme.json)', () => {
    const schema = JSON.parse(readFileSync(join(root, 'node_modules', 'app-builder-lib', 'scheme.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    // Draft-07 is ajv 8's default; the schema uses a few non-standard keywords (strict off).
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    const config = loadConfig();
    const valid = validate(config);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the validator does catch a wrong config (the test is not vacuous)', () => {
    const schema = JSON.parse(readFileSync(join(root, 'node_modules', 'app-builder-lib', 'scheme.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate({ ...loadConfig(), electronFuses: { runAsNode: 'no' } })).toBe(false);
    expect(validate({ ...loadConfig(), nsis: { oneClik: false } })).toBe(false);
  });

  it('flips the security fuses and builds the three platforms as the issue asks', () => {
    const config = loadConfig() as {
      electronFuses: Record<string, boolean>;
      asarUnpack: string[];
      nsis: Record<string, unknown>;
      mac: { target: { target: string }[]; hardenedRuntime: boolean; entitlements: string; entitlementsInherit: string; notarize: boolean };
      win: { target: { target: string }[] };
      linux: { target: { target: string }[] };
      publish: { provider: string };
      files: string[];
    };
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
    expect(config.win.target.map((t) => t.target)).toEqual(['nsis']);
    expect(config.nsis).toMatchObject({ oneClick: false, perMachine: false, artifactName: '${productName}-Setup-${version}.${ext}' });
    expect(config.mac.target.map((t) => t.target)).toEqual(['dmg', 'zip']);
    expect(config.mac).toMatchObject({
      hardenedRuntime: true,
      notarize: true,
      entitlements: 'build/entitlements.mac.plist',
      entitlementsInherit: 'build/entitlements.mac.inherit.plist',
    });
    for (const file of [config.mac.entitlements, config.mac.entitlementsInherit])
      expect(readFileSync(join(root, file), 'utf8')).toContain('com.apple.security.cs.allow-jit');
    expect(config.linux.target.map((t) => t.target)).toEqual(['AppImage']);
    expect(config.asarUnpack).toEqual(
      expect.arrayContaining(['**/*.node', 'node_modules/better-sqlite3/**/*', 'node_modules/@napi-rs/keyring-*/**/*']),
    );
    expect(config.publish.provider).toBe('generic');
    expect(config.files).toEqual(expect.arrayContaining(['dist/electron/**/*', 'dist/renderer/**/*', 'server/db/migrations/**/*']));
  });

  it('package.json points Electron at the compiled main process', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string> };
    expect(pkg.main).toBe('dist/electron/main.js');
    expect(pkg.scripts.typecheck).toContain('tsc -p electron/tsconfig.json --noEmit');
    expect(pkg.scripts.desktop).toBeDefined();
    expect(pkg.scripts.dist).toContain('electron-builder');
  });
});
