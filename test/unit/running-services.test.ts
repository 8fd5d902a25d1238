import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDirNotice } from '../../server/cli/common.js';
import { listRunningServices, registerRunningService, runningServicesDir, type RunningService } from '../../server/running-services.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'courtier-running-'));
  dirs.push(dir);
  return dir;
}

const service = (pid: number, dataDir: string, url = 'http://127.0.0.1:8787'): RunningService => ({
  pid,
  url,
  data_dir: dataDir,
  started_at: '2026-12-02T09:00:00.000Z',
});
const uid = process.getuid?.();

describe('the running services folder', () => {
  it('is under XDG_RUNTIME_DIR when set, else a per-user folder in the temp folder', () => {
    expect(runningServicesDir({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toBe('/run/user/1000/courtier/services');
    expect(runningServicesDir({}, 1000)).toBe(join(tmpdir(), 'courtier-1000', 'services'));
  });

  it('registers a service (0600 in a 0700 folder), lists it while its process lives, and forgets it when it stops', () => {
    const dir = join(scratch(), 'services');
    const unregister = registerRunningService(dir, service(process.pid, '/srv/a'));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, `${process.pid}.json`)).mode & 0o777).toBe(0o600);
    expect(listRunningServices(dir)).toEqual([service(process.pid, '/srv/a')]);
    unregister();
    expect(listRunningServices(dir)).toEqual([]);
  });

  it('removes the entry of a process that died without unregistering (kill -9), and skips what it cannot read', () => {
    const dir = join(scratch(), 'services');
    registerRunningService(dir, service(424242, '/srv/dead'));
    registerRunningService(dir, service(process.pid, '/srv/alive'));
    writeFileSync(join(dir, '77.json'), '{"pid": "not a number"');
    writeFileSync(join(dir, 'notes.txt'), 'not an entry');
    expect(listRunningServices(dir, (pid) => pid === process.pid)).toEqual([service(process.pid, '/srv/alive')]);
    expect(readdirSync(dir).sort()).toEqual([`${process.pid}.json`, '77.json', 'notes.txt'].sort());
  });

  it.skipIf(uid === undefined)('ignores a folder that is a link or that another user owns, and never fails the service', () => {
    const root = scratch();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const linked = join(root, 'linked');
    symlinkSync(elsewhere, linked);
    registerRunningService(linked, service(process.pid, '/srv/a'));
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(listRunningServices(linked)).toEqual([]);
    // Seen as another user's folder: nothing written, nothing read.
    const other = join(root, 'other');
    expect(registerRunningService(other, service(process.pid, '/srv/a'), (uid ?? 0) + 1)).toBeTypeOf('function');
    expect(readdirSync(other)).toEqual([]);
    registerRunningService(other, service(process.pid, '/srv/a'));
    expect(listRunningServices(other, () => true, (uid ?? 0) + 1)).toEqual([]);
    // A folder that cannot be made: the service runs unregistered.
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    expect(() => registerRunningService(join(file, 'services'), service(process.pid, '/srv/a'))()).not.toThrow();
    expect(existsSync(join(file, 'services'))).toBe(false);
  });
});

describe('what a command says of its data dir', () => {
  it('names the data dir and where it was chosen', () => {
    expect(dataDirNotice('/home/a/.local/share/courtier', 'default', [])).toEqual([
      'courtier: data dir /home/a/.local/share/courtier (the default; --data-dir or COURTIER_DATA_DIR chooses another)',
    ]);
    expect(dataDirNotice('/srv/a', 'COURTIER_DATA_DIR', [])).toEqual(['courtier: data dir /srv/a (from COURTIER_DATA_DIR)']);
    expect(dataDirNotice('/srv/a', '--data-dir', [])).toEqual(['courtier: data dir /srv/a (from --data-dir)']);
  });

  it('says nothing more when a running service uses the same data dir, however spelled', () => {
    const root = scratch();
    const link = join(root, 'link');
    symlinkSync(root, link);
    expect(dataDirNotice(`${link}/`, '--data-dir', [service(1, '/srv/other', 'http://127.0.0.1:9000'), service(2, root)])).toHaveLength(1);
  });

  it('warns of each running service on another data dir, with what to type', () => {
    const lines = dataDirNotice('/home/a/.local/share/courtier', 'default', [
      service(4242, "/tmp/Cabinet d'essai"),
      service(4343, '/srv/b', 'http://127.0.0.1:9000'),
    ]);
    expect(lines.slice(1)).toEqual([
      "courtier: warning: the Courtier service at http://127.0.0.1:8787 (pid 4242) uses another data dir, /tmp/Cabinet d'essai: it will not see what this command does. Run the command with --data-dir '/tmp/Cabinet d'\\''essai' (or the same COURTIER_DATA_DIR as the service).",
      'courtier: warning: the Courtier service at http://127.0.0.1:9000 (pid 4343) uses another data dir, /srv/b: it will not see what this command does. Run the command with --data-dir /srv/b (or the same COURTIER_DATA_DIR as the service).',
    ]);
  });
});
