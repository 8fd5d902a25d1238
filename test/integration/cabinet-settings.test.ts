import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseFile, openDatabase, type Database } from '../../server/platform/db/open.js';
import { insertCabinet } from '../../server/tenancy/store.js';
import { getCabinetSettings, setLlmDataSharing } from '../../server/tenancy/service.js';
import { tempDir } from '../helpers/server.js';

const opened: { dir: string; db: Database }[] = [];
afterEach(() => {
  for (const { dir, db } of opened.splice(0)) {
    db.sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function withCabinet(): { db: Database; cabinetId: string } {
  const dir = tempDir();
  const db = openDatabase(databaseFile(dir));
  opened.push({ dir, db });
  const cabinetId = 'c0a1b2c3-0000-4000-8000-000000000001';
  insertCabinet(db.orm, {
    id: cabinetId,
    name: 'Cabinet',
    llmDataSharing: false,
    unattendedHumanSteps: 'wait',
    orias: null,
    address: null,
    createdAt: 0,
  });
  return { db, cabinetId };
}

describe("a cabinet's data-sharing switch, read on every MCP tool call and webhook delivery", () => {
  it('reads off by default, then as set', () => {
    const { db, cabinetId } = withCabinet();
    expect(getCabinetSettings({ db }, cabinetId)).toMatchObject({ llm_data_sharing: false });
    setLlmDataSharing({ db }, cabinetId, true);
    expect(getCabinetSettings({ db }, cabinetId)).toMatchObject({ llm_data_sharing: true });
    setLlmDataSharing({ db }, cabinetId, false);
    expect(getCabinetSettings({ db }, cabinetId)).toMatchObject({ llm_data_sharing: false });
  });

  it('answers not_found for a cabinet that is not here', () => {
    const { db } = withCabinet();
    expect(() => getCabinetSettings({ db }, 'c0a1b2c3-0000-4000-8000-00000000ffff')).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });

  it('reads anything but 1 as off, as drizzle reads the column: personal data stays masked', () => {
    const { db, cabinetId } = withCabinet();
    for (const stored of [2, -1, 0.5, 'yes']) {
      db.sqlite.prepare('UPDATE cabinets SET llm_data_sharing = ? WHERE id = ?').run(stored, cabinetId);
      expect(getCabinetSettings({ db }, cabinetId)).toMatchObject({ llm_data_sharing: false });
    }
  });
});
