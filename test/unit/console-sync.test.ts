import { describe, expect, it } from 'vitest';
import { createStatusFeed } from '../../renderer/src/pages/sync/feed.js';
import {
  absoluteTime,
  connectProblem,
  indicatorOf,
  indicatorTitle,
  problemOf,
  recordOf,
  relativeTime,
  retryOutcome,
} from '../../renderer/src/pages/sync/format.js';
import { SYNC_STRINGS } from '../../renderer/src/pages/sync/strings.js';
import type { SyncConflict, SyncStatus } from '../../shared/console-sync.js';

/** The Sync page's and the header indicator's pure rules (renderer/src/pages/sync, no DOM). */

const { en, fr } = SYNC_STRINGS;
const NOW = Date.UTC(2026, 10, 22, 9, 0, 0);
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function status(changes: Partial<SyncStatus> = {}): SyncStatus {
  return {
    cabinet_id: 'cab_1',
    state: 'idle',
    paused: false,
    hub_url: 'https://hub.example.fr',
    device_id: 'dev_1',
    device_name: 'Poste accueil',
    pending_changes: 0,
    last_push_at: null,
    last_pull_at: null,
    last_error: null,
    last_error_code: null,
    offline_since: null,
    clock_ahead_seconds: 0,
    resyncing: false,
    refused_by_hub: 0,
    set_aside_changes: 0,
    ...changes,
  };
}

describe('relativeTime: how long ago, in whole units never rounded up', () => {
  it('says now under ten seconds, either way', () => {
    expect(relativeTime(ago(0), NOW, 'en')).toBe('now');
    expect(relativeTime(ago(9), NOW, 'en')).toBe('now');
    expect(relativeTime(ago(-9), NOW, 'en')).toBe('now');
    expect(relativeTime(ago(5), NOW, 'fr')).toBe('maintenant');
  });

  it('counts seconds, minutes, hours, then days', () => {
    expect(relativeTime(ago(42), NOW, 'en')).toBe('42 seconds ago');
    expect(relativeTime(ago(60), NOW, 'en')).toBe('1 minute ago');
    expect(relativeTime(ago(119), NOW, 'en')).toBe('1 minute ago');
    expect(relativeTime(ago(7 * 60 + 30), NOW, 'en')).toBe('7 minutes ago');
    expect(relativeTime(ago(3 * 3600 + 59 * 60), NOW, 'en')).toBe('3 hours ago');
    expect(relativeTime(ago(3 * 86_400), NOW, 'en')).toBe('3 days ago');
    expect(relativeTime(ago(7 * 60), NOW, 'fr')).toBe('il y a 7 minutes');
    expect(relativeTime(ago(2 * 3600), NOW, 'fr')).toBe('il y a 2 heures');
  });

  it('says a moment ahead of this machine’s clock as ahead (a hub whose clock is ahead)', () => {
    expect(relativeTime(ago(-150), NOW, 'en')).toBe('in 2 minutes');
    expect(relativeTime(ago(-150), NOW, 'fr')).toBe('dans 2 minutes');
  });
});

describe('absoluteTime', () => {
  it('gives the date and the time to the second, in the page’s language', () => {
    const iso = '2026-11-22T09:05:07.000Z';
    const local = new Date(iso);
    const seconds = String(local.getSeconds()).padStart(2, '0');
    expect(absoluteTime(iso, 'en')).toMatch(new RegExp(`2026, \\d{2}:\\d{2}:${seconds}$`));
    expect(absoluteTime(iso, 'en')).toContain('Nov');
    expect(absoluteTime(iso, 'fr')).toContain('nov.');
  });
});

describe('indicatorOf: the header’s few words', () => {
  it('shows nothing while the cabinet does not sync', () => {
    expect(indicatorOf(status({ state: 'off', hub_url: null, device_id: null, device_name: null }), en)).toBeNull();
  });

  it('says each state, with the changes waiting when they wait', () => {
    expect(indicatorOf(status(), en)).toEqual({ tone: 'ok', text: 'Synced' });
    expect(indicatorOf(status({ pending_changes: 3 }), en)).toEqual({ tone: 'busy', text: 'Syncing…' });
    expect(indicatorOf(status({ state: 'syncing', pending_changes: 40 }), en)).toEqual({ tone: 'busy', text: 'Syncing…' });
    expect(indicatorOf(status({ state: 'offline' }), en)).toEqual({ tone: 'warning', text: 'Offline' });
    expect(indicatorOf(status({ state: 'offline', pending_changes: 1 }), en)).toEqual({
      tone: 'warning',
      text: 'Offline — 1 change waiting',
    });
    expect(indicatorOf(status({ state: 'offline', pending_changes: 2 }), en)).toEqual({
      tone: 'warning',
      text: 'Offline — 2 changes waiting',
    });
    expect(indicatorOf(status({ state: 'error', last_error: 'this device was revoked on the hub' }), en)).toEqual({
      tone: 'danger',
      text: 'Sync problem',
    });
    expect(indicatorOf(status({ state: 'offline', pending_changes: 2 }), fr)).toEqual({
      tone: 'warning',
      text: 'Hors ligne — 2 modifications en attente',
    });
    expect(indicatorOf(status({ state: 'error' }), fr)?.text).toBe('Problème de synchronisation');
  });

  it('says a pause before the state it keeps', () => {
    expect(indicatorOf(status({ paused: true }), en)).toEqual({ tone: 'warning', text: 'Sync paused' });
    expect(indicatorOf(status({ paused: true, state: 'offline', pending_changes: 5 }), en)).toEqual({
      tone: 'warning',
      text: 'Sync paused — 5 changes waiting',
    });
    expect(indicatorOf(status({ paused: true, pending_changes: 1 }), fr)?.text).toBe(
      'Synchronisation en pause — 1 modification en attente',
    );
  });

  it('says a catch-up after a restored backup, offline too, but not over a pause or a refusal', () => {
    expect(indicatorOf(status({ resyncing: true }), en)).toEqual({ tone: 'busy', text: 'Catching up after a restored backup' });
    expect(indicatorOf(status({ resyncing: true, state: 'syncing', pending_changes: 4 }), en)).toEqual({
      tone: 'busy',
      text: 'Catching up after a restored backup',
    });
    expect(indicatorOf(status({ resyncing: true, state: 'offline', pending_changes: 2 }), en)).toEqual({
      tone: 'warning',
      text: 'Offline — catching up after a restored backup',
    });
    expect(indicatorOf(status({ resyncing: true }), fr)?.text).toBe('Remise à niveau après une sauvegarde restaurée');
    expect(indicatorOf(status({ resyncing: true, state: 'offline' }), fr)?.text).toBe(
      'Hors ligne — remise à niveau après une sauvegarde restaurée',
    );
    expect(indicatorOf(status({ resyncing: true, paused: true }), en)?.text).toBe('Sync paused');
    expect(indicatorOf(status({ resyncing: true, state: 'error' }), en)?.text).toBe('Sync problem');
  });
});

describe('indicatorTitle: the header’s tooltip', () => {
  it('is its name alone, or followed by the catch-up and the last problem', () => {
    expect(indicatorTitle(status(), en, 'en')).toBe('Sync status');
    expect(indicatorTitle(status({ resyncing: true }), en, 'en')).toBe(
      'Sync status — Catching up with the hub after a restored backup — nothing is lost meanwhile.',
    );
    const revoked = status({ state: 'error', resyncing: true, last_error: 'revoked', last_error_code: 'device_revoked' });
    expect(indicatorTitle(revoked, fr, 'fr')).toBe(
      'État de la synchronisation — Remise à niveau avec le hub après la restauration d’une sauvegarde — rien n’est perdu entre-temps. Cet ordinateur a été révoqué sur le hub : demandez un nouveau code à l’exploitant du hub, déconnectez, puis reconnectez.',
    );
  });
});

describe('problemOf: the last problem in the page’s language', () => {
  const offlineSince = '2026-11-22T10:42:00.000Z';
  const time = (lang: 'en' | 'fr') =>
    new Intl.DateTimeFormat(lang === 'fr' ? 'fr-FR' : 'en-GB', { timeStyle: 'short' }).format(new Date(offlineSince));

  it('says nothing without a problem', () => {
    expect(problemOf(status(), en, 'en')).toBeNull();
  });

  it('words the engine’s problems from their codes and figures, in English and French', () => {
    const offline = status({
      state: 'offline',
      last_error: 'hub unreachable since 10:42',
      last_error_code: 'hub_unreachable',
      offline_since: offlineSince,
    });
    expect(problemOf(offline, en, 'en')).toBe(
      `The hub has not answered since ${time('en')}; changes wait here and are sent as soon as it answers.`,
    );
    expect(problemOf(offline, fr, 'fr')).toContain(`Le hub ne répond plus depuis ${time('fr')}`);
    const ahead = status({ state: 'error', last_error: 'clock ahead', last_error_code: 'clock_skew', clock_ahead_seconds: 7 * 60 + 10 });
    expect(problemOf(ahead, en, 'en')).toContain('clock is 7 minutes ahead');
    expect(problemOf(ahead, fr, 'fr')).toContain('avance de 7 minutes');
    const revoked = status({ state: 'error', last_error: 'this device was revoked on the hub', last_error_code: 'device_revoked' });
    expect(problemOf(revoked, fr, 'fr')).toMatch(/^Cet ordinateur a été révoqué sur le hub/);
  });

  it('keeps the server’s own words for a problem it has no words for, as a detail in French', () => {
    const other = status({ state: 'error', last_error: 'sync failed on this install: disk full', last_error_code: 'internal_error' });
    expect(problemOf(other, en, 'en')).toBe('sync failed on this install: disk full');
    expect(problemOf(other, fr, 'fr')).toBe('Détail : sync failed on this install: disk full');
  });
});

describe('connectProblem: a failed connect, beside its field', () => {
  const badUrl = { error: 'invalid_hub_url', message: 'Hub URL refused: an http:// hub URL is accepted only on this machine (localhost).' };
  const unreachable = { error: 'hub_unreachable', message: 'the hub at http://127.0.0.1:9 cannot be reached (fetch failed).' };

  it('in English: the server’s own words, capitalised, by the field they are about', () => {
    expect(connectProblem(badUrl, en)).toEqual({ field: 'hub_url', text: badUrl.message, detail: null });
    expect(connectProblem(unreachable, en)).toEqual({
      field: 'hub_url',
      text: 'The hub at http://127.0.0.1:9 cannot be reached (fetch failed).',
      detail: null,
    });
    expect(connectProblem({ error: 'invalid_pairing_code', message: 'The pairing code is unknown.' }, en).field).toBe('code');
    expect(connectProblem({ error: 'too_many_pairing_attempts', message: 'Too many.' }, en).field).toBe('code');
    expect(connectProblem({ error: 'sync_already_on', message: 'Already.' }, en)).toEqual({ field: null, text: 'Already.', detail: null });
  });

  it('in French: the page’s words for the code, the server’s as the detail', () => {
    const problem = connectProblem(badUrl, fr);
    expect(problem.field).toBe('hub_url');
    expect(problem.text).toMatch(/^Cette URL de hub est refusée/);
    expect(problem.detail).toBe(`Détail : ${badUrl.message}`);
    expect(connectProblem({ error: 'something_new', message: 'As the server says.' }, fr)).toEqual({
      field: null,
      text: 'As the server says.',
      detail: null,
    });
  });

  it('a validation error names its field through its details', () => {
    const error = {
      error: 'validation_error',
      message: 'The request is invalid: body.code: Too big.',
      details: [{ path: 'body.code', message: 'Too big' }],
    };
    expect(connectProblem(error, en).field).toBe('code');
    expect(connectProblem({ ...error, details: [{ path: 'body', message: 'Invalid' }] }, en).field).toBeNull();
    expect(connectProblem({ ...error, details: 'not a list' }, en).field).toBeNull();
  });
});

describe('createStatusFeed: what one fetch learns, every listener shows; an older answer never hides a newer one', () => {
  it('hands each status to every listener, and the last one to a late listener', () => {
    const feed = createStatusFeed<string>();
    const a: string[] = [];
    const b: string[] = [];
    const stopA = feed.subscribe((s) => a.push(s));
    expect(feed.offer(feed.begin(), 'idle')).toBe(true);
    feed.subscribe((s) => b.push(s));
    feed.publish('paused');
    stopA();
    feed.publish('resumed');
    expect(a).toEqual(['idle', 'paused']);
    expect(b).toEqual(['idle', 'paused', 'resumed']);
  });

  it('drops a fetch’s answer when a status newer than the fetch is shown', () => {
    const feed = createStatusFeed<string>();
    const seen: string[] = [];
    feed.subscribe((s) => seen.push(s));
    const poll = feed.begin();
    feed.publish('paused (the action’s answer)');
    expect(feed.offer(poll, 'running (read before the pause)')).toBe(false);
    // Two polls in flight, answered in order: both shown.
    const first = feed.begin();
    const second = feed.begin();
    expect(feed.offer(first, 'one')).toBe(true);
    expect(feed.offer(second, 'two')).toBe(true);
    // Answered out of order: the older answer is dropped.
    const older = feed.begin();
    const newer = feed.begin();
    expect(feed.offer(newer, 'four')).toBe(true);
    expect(feed.offer(older, 'three')).toBe(false);
    expect(seen).toEqual(['paused (the action’s answer)', 'one', 'two', 'four']);
  });
});

describe('set-aside changes: their record and what became of one tried again', () => {
  const conflict: SyncConflict = {
    seq: 42,
    device_id: 'dev_2',
    kind: 'opportunity',
    record_id: 'opp_1',
    op: 'upsert',
    hlc: '000001-000000-dev_2',
    fields: '{"stage":"on_hold"}',
    reason: 'invalid_fields',
    message: 'stage: invalid option',
    set_aside_at: ago(60),
  };
  const none = { applied: [], still_set_aside: [], no_longer_on_hub: [] };

  it('names the record in the page’s language; a kind of a newer version keeps its own name', () => {
    expect(recordOf(conflict, en)).toBe('opportunity opp_1');
    expect(recordOf({ kind: 'devis', record_id: 'dev_9' }, fr)).toBe('devis dev_9');
    expect(recordOf({ kind: 'job', record_id: 'job_3' }, en)).toBe('pricing job_3');
    expect(recordOf({ kind: 'reminder', record_id: 'rem_1' }, fr)).toBe('reminder rem_1');
  });

  it('applied: the change is on this computer now', () => {
    expect(retryOutcome({ ...none, applied: [42] }, conflict, [], en)).toBe(
      'Applied: this change to opportunity opp_1 is now on this computer.',
    );
    expect(retryOutcome({ ...none, applied: [42] }, conflict, [], fr)).toBe(
      'Appliquée : cette modification de la fiche opportunité opp_1 est maintenant sur cet ordinateur.',
    );
  });

  it('still set aside: with its reason as the list read afterwards gives it, else as it was', () => {
    const after = [{ ...conflict, reason: 'not_understood' as const }];
    expect(retryOutcome({ ...none, still_set_aside: [42] }, conflict, after, en)).toBe(
      'Still set aside: it comes from a newer Courtier: it will apply once this computer is updated.',
    );
    expect(retryOutcome({ ...none, still_set_aside: [42] }, conflict, null, en)).toBe(
      'Still set aside: a value this computer does not accept.',
    );
    expect(retryOutcome({ ...none, still_set_aside: [42] }, conflict, [], fr)).toBe(
      'Toujours mise de côté : une valeur que cet ordinateur n’accepte pas.',
    );
  });

  it('gone from the hub: discard it; in none of the lists: no longer set aside', () => {
    expect(retryOutcome({ ...none, no_longer_on_hub: [42] }, conflict, [conflict], en)).toBe('The hub no longer has it: discard it.');
    expect(retryOutcome({ ...none, no_longer_on_hub: [42] }, conflict, [conflict], fr)).toBe('Le hub ne l’a plus : abandonnez-la.');
    expect(retryOutcome({ ...none, applied: [7] }, conflict, [], en)).toBe('This change to opportunity opp_1 is no longer set aside.');
  });
});
